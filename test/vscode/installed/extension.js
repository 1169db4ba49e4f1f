// Test-only probe: does nothing itself; suite.js runs in its extension host and checks the
// Handoff extension that was installed from the .vsix (not loaded as a development extension).
exports.activate = () => undefined;
