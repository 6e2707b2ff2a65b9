package localcluster

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/shipstream/bloodraven/playground/internal/nsutil"
)

// namespaceInodes records the inode of every network namespace of the
// cluster, so processes still inside one can be found after the names go.
func namespaceInodes(id string) map[uint64]bool {
	out := map[uint64]bool{}
	for _, n := range nsutil.List(id) {
		var st syscall.Stat_t
		if err := syscall.Stat(nsutil.Path(n), &st); err == nil {
			out[st.Ino] = true
		}
	}
	return out
}

// processesIn lists the processes whose network namespace is in inodes.
func processesIn(inodes map[uint64]bool) []int {
	if len(inodes) == 0 {
		return nil
	}
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		link, err := os.Readlink(filepath.Join("/proc", e.Name(), "ns", "net"))
		if err != nil {
			continue
		}
		ino, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(link, "net:["), "]"), 10, 64)
		if err == nil && inodes[ino] {
			if !isZombieOfOurs(pid) {
				out = append(out, pid)
			}
		}
	}
	return out
}

// isZombieOfOurs reports a process that has exited but is not reaped yet.
func isZombieOfOurs(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndex(s, ")")
	return i > 0 && len(s) > i+2 && s[i+2] == 'Z'
}
