package kubelet

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/shipstream/bloodraven/playground/internal/podexec"
)

var specSeq atomic.Int64

// tempSpec writes a one-shot helper spec into the Pod's folder.
func tempSpec(dir string, spec podexec.Spec) (string, error) {
	d := filepath.Join(dir, "exec")
	if err := os.MkdirAll(d, 0o755); err != nil {
		return "", fmt.Errorf("exec folder: %w", err)
	}
	p := filepath.Join(d, fmt.Sprintf("%d.json", specSeq.Add(1)%64))
	return p, podexec.Write(p, spec)
}
