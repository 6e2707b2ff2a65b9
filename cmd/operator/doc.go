// Command operator is Bloodraven's operator. See docs/operator.md for its
// flags and what it does.
package main
