package mysql

import (
	"context"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// shutdownStatement asks the server to stop. MySQL 8.0 and MariaDB 10.11
// both take it as is; it needs the SHUTDOWN privilege.
const shutdownStatement = "SHUTDOWN"

// shutdownAfterReplicas asks MariaDB (10.4.4 and later) to stop once every
// connected replica has received the whole binary log.
const shutdownAfterReplicas = "SHUTDOWN WAIT FOR ALL SLAVES"

// Shutdown asks the server to stop, as the sidecar's last resort when its
// fence cannot complete in time (a server always boots fenced, so stopping
// it is a fence). The server answers OK before it closes the connection, or
// drops the connection first: both count as sent, and the caller watches
// the process to learn when it is gone. Any other answer is an error.
func (in *instance) Shutdown(ctx context.Context) error {
	return in.shutdown(ctx, "shutdown", func(dialect) string { return shutdownStatement })
}

// ShutdownAfterReplicas is Shutdown for a fenced server that is going away
// on purpose (the sidecar's termination): on MariaDB the server first waits
// until every connected replica has received its whole binary log, so the
// replicas hold every transaction it acknowledged; the caller's deadline
// (and its SIGKILL) bounds the wait. MySQL has no such wait: it is
// Shutdown there. Not part of Instance.
func (in *instance) ShutdownAfterReplicas(ctx context.Context) error {
	return in.shutdown(ctx, "shutdown after replicas", func(d dialect) string {
		if d.flavor() == v1alpha1.FlavorMariaDB {
			return shutdownAfterReplicas
		}
		return shutdownStatement
	})
}

func (in *instance) shutdown(ctx context.Context, verb string, stmt func(dialect) string) error {
	return in.run(ctx, verb, 0, func(ctx context.Context, ex executor, d dialect) error {
		err := ex.exec(ctx, stmt(d))
		if err != nil && serverErrno(err) == 0 && unreachable(err) && ctx.Err() == nil {
			return nil // the server went away while answering: it is shutting down
		}
		return err
	})
}
