package backup

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// binlogTool runs mariadb-binlog on file with args, TZ=UTC, its output to w.
func binlogTool(ctx context.Context, tool, file string, w io.Writer, args ...string) error {
	if tool == "" {
		tool = "mariadb-binlog"
	}
	cmd := exec.CommandContext(ctx, tool, append(args, file)...)
	cmd.Env = append(os.Environ(), "TZ=UTC")
	cmd.Stdout = w
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w: %s", tool, file, err, strings.TrimSpace(stderr.String()))
	}
	return nil
}
