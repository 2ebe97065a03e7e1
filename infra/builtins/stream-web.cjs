module.exports = process.getBuiltinModule('node:stream/web');
