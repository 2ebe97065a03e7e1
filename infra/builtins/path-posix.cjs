module.exports = process.getBuiltinModule('node:path/posix');
