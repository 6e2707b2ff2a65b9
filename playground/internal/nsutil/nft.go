package nsutil

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// NFT loads an nft script inside the named netns, atomically.
func NFT(ctx context.Context, netns, script string) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, "ip", "netns", "exec", netns, "nft", "-f", "-")
	c.Stdin = strings.NewReader(script)
	out, err := c.CombinedOutput()
	if err != nil {
		return fmt.Errorf("nft in %s: %w: %s\nscript:\n%s", netns, err, bytes.TrimSpace(out), script)
	}
	return nil
}

// ReplaceTable returns a script that swaps in the table named family name
// with body as its contents, in one transaction.
func ReplaceTable(family, name, body string) string {
	return fmt.Sprintf("table %s %s\ndelete table %s %s\ntable %s %s {\n%s}\n", family, name, family, name, family, name, body)
}
