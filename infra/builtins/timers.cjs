module.exports = process.getBuiltinModule('node:timers');
