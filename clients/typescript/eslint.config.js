// @ts-check
// The root's `eslint .` lints this folder with this file (ESLint 10 uses the config nearest each
// file): the root's rules, without the build output.
import root from '../../eslint.config.js';

export default [{ ignores: ['dist/'] }, ...root];
