module.exports = process.getBuiltinModule('node:os');
