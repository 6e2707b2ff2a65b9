// Command simulate owns the command line of Bloodraven's deterministic
// simulation (internal/sim): it runs many seeds, or replays one seed with its whole
// trace, and ends with the lines "sim-seeds <n> seeds" and
// "sim-violations <n> count". It exits 1 when an invariant broke. `make sim`
// runs it.
package main
