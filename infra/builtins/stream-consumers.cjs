module.exports = process.getBuiltinModule('node:stream/consumers');
