/* __TIME__ differs per run: farm-cc compiles it here. */
const char* built_at = __TIME__;
