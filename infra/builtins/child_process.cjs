module.exports = process.getBuiltinModule('node:child_process');
