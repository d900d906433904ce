// Package route chooses the plan a GPU runs for a batch of tridiagonal
// systems: for each family of kernels a table of variants (the kernels,
// their launch functions in package tuning, the rule that accepts a
// problem) and one dispatch function that returns a Route, a plain data
// value that a GPU build turns into launches. It is pure Go and
// deterministic: the choices are unit-tested against the recorded
// devices of package tuning with recorded registers. The kernels' launch
// bounds come from the generated kernel table.
package route
