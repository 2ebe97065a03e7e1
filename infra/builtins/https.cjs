module.exports = process.getBuiltinModule('node:https');
