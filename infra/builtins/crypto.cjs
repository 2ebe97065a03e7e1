module.exports = process.getBuiltinModule('node:crypto');
