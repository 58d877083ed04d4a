// @vms/routing/testing: the packed-page format between MariaDB and the build thread (rule-pages.mysql.ts,
// packed-rules.ts), exported apart from the package's API so integration tests can check the SQL's output
// byte for byte against the packer without the product depending on these internals.
export { packPagesOn, PACKED_PAGE_MAX_BYTES, PACKED_ROW_SQL } from './rule-pages.mysql.ts';
export { FIELD_SEP, packRuleRows, parsePackedRules, ROW_END } from './packed-rules.ts';
