module.exports = process.getBuiltinModule('node:dns/promises');
