package mysql

import (
	"context"
)

// shutdownStatement asks the server to stop. MySQL 8.0 and MariaDB 10.11
// both take it as is; it needs the SHUTDOWN privilege.
const shutdownStatement = "SHUTDOWN"

// Shutdown asks the server to stop, as the sidecar's last resort when its
// fence cannot complete in time (a server always boots fenced, so stopping
// it is a fence). The server answers OK before it closes the connection, or
// drops the connection first: both count as sent, and the caller watches
// the process to learn when it is gone. Any other answer is an error.
func (in *instance) Shutdown(ctx context.Context) error {
	return in.run(ctx, "shutdown", 0, func(ctx context.Context, ex executor, _ dialect) error {
		err := ex.exec(ctx, shutdownStatement)
		if err != nil && serverErrno(err) == 0 && unreachable(err) && ctx.Err() == nil {
			return nil // the server went away while answering: it is shutting down
		}
		return err
	})
}
