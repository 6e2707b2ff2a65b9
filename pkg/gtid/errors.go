package gtid

import (
	"errors"
	"fmt"
)

// ErrSyntax is wrapped by every parse error in this package; test with errors.Is.
var ErrSyntax = errors.New("gtid: syntax error")

// ErrNotMariaDB is returned by PosFromSet when the set holds MySQL source ids.
var ErrNotMariaDB = errors.New("gtid: set has MySQL source ids, not MariaDB domain-server ids")

// maxTokenInError bounds how much of an offending token an error message quotes.
const maxTokenInError = 64

// SyntaxError describes bad GTID text. It unwraps to ErrSyntax.
type SyntaxError struct {
	Offset int    // byte offset of Token in the input
	Token  string // the offending token (possibly truncated); "" at end of input
	Msg    string // what is wrong with it
}

func (e *SyntaxError) Error() string {
	if e.Token == "" {
		return fmt.Sprintf("gtid: syntax error at offset %d (end of input): %s", e.Offset, e.Msg)
	}
	return fmt.Sprintf("gtid: syntax error at offset %d, token %q: %s", e.Offset, e.Token, e.Msg)
}

// Unwrap makes errors.Is(err, ErrSyntax) true.
func (e *SyntaxError) Unwrap() error { return ErrSyntax }

func syntaxErr(off int, tok, format string, args ...any) error {
	if len(tok) > maxTokenInError {
		tok = tok[:maxTokenInError] + "..."
	}
	return &SyntaxError{Offset: off, Token: tok, Msg: fmt.Sprintf(format, args...)}
}
