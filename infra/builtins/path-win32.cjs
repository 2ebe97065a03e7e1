module.exports = process.getBuiltinModule('node:path/win32');
