package kubelet

import (
	"strings"
)

// Image is what a container image name stands for on this machine.
type Image struct {
	// Entrypoint replaces the image's entrypoint: the program and its first
	// arguments. A container's command, when set, replaces it as in Docker.
	Entrypoint []string `json:"entrypoint"`
	// Cmd is used as the arguments when the container sets neither command nor args.
	Cmd []string `json:"cmd,omitempty"`
	// PrivateDirs are paths that an image's filesystem owns: each container
	// gets an empty directory of its own there unless a volume is mounted.
	PrivateDirs []string `json:"privateDirs,omitempty"`
}

// Images maps image names to local programs. A key matches the full image
// reference, the reference without its tag or digest, or its last path
// element without tag (so "mariadb" matches "docker.io/library/mariadb:11").
type Images map[string]Image

// Lookup finds the entry for an image reference.
func (m Images) Lookup(ref string) (Image, bool) {
	if img, ok := m[ref]; ok {
		return img, true
	}
	repo := ref
	if i := strings.Index(repo, "@"); i >= 0 {
		repo = repo[:i]
	}
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	if img, ok := m[repo]; ok {
		return img, true
	}
	base := repo[strings.LastIndex(repo, "/")+1:]
	img, ok := m[base]
	return img, ok
}
