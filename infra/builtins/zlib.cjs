module.exports = process.getBuiltinModule('node:zlib');
