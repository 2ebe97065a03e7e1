module.exports = process.getBuiltinModule('node:process');
