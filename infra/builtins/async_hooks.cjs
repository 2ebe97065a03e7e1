module.exports = process.getBuiltinModule('node:async_hooks');
