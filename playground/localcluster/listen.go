package localcluster

import (
	"fmt"
	"net"

	"github.com/shipstream/bloodraven/playground/internal/nsutil"
	"github.com/shipstream/bloodraven/playground/internal/supervisor"
)

// ClientAddr is the "clients" address: the source of Dial, and where Listen
// serves. It is a partition target like a site ("clients").
func (c *Cluster) ClientAddr() string { return supervisor.ClientIP }

// Listen opens a TCP listener on the clients address inside the cluster's
// network, at port (0 picks one): Pods reach it there, and through a
// Service whose endpoints name it, as they would reach another program in
// the cluster. Close it when done.
func (c *Cluster) Listen(port int) (net.Listener, error) {
	var ln net.Listener
	err := nsutil.Do(c.ID, func() error {
		var err error
		ln, err = net.Listen("tcp", net.JoinHostPort(supervisor.ClientIP, fmt.Sprint(port)))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listen on the clients address: %w", err)
	}
	return ln, nil
}
