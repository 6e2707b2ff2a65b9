package faults

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/shipstream/bloodraven/playground/internal/nsutil"
)

// Table is the nft table that holds the fault rules (family inet).
const Table = "brlc_faults"

// Partition cuts every packet between two named targets.
type Partition struct {
	A, B string
}

// Set is the current faults; Resolve turns a target name into CIDRs when
// the rules are written, so targets that name Pods follow their current IPs.
type Set struct {
	NetNS   string
	Resolve func(target string) ([]string, error)

	mu         sync.Mutex
	partitions map[Partition]bool
	isolated   map[string]bool
}

func norm(a, b string) Partition {
	if a > b {
		a, b = b, a
	}
	return Partition{A: a, B: b}
}

// Partition adds a partition between a and b and applies the rules.
func (s *Set) Partition(ctx context.Context, a, b string) error {
	for _, t := range []string{a, b} {
		if _, err := s.Resolve(t); err != nil {
			return err
		}
	}
	s.mu.Lock()
	if s.partitions == nil {
		s.partitions = map[Partition]bool{}
	}
	s.partitions[norm(a, b)] = true
	s.mu.Unlock()
	return s.Apply(ctx)
}

// Heal removes the partition between a and b; with both empty it removes
// every partition.
func (s *Set) Heal(ctx context.Context, a, b string) error {
	s.mu.Lock()
	if a == "" && b == "" {
		s.partitions = nil
	} else {
		delete(s.partitions, norm(a, b))
	}
	s.mu.Unlock()
	return s.Apply(ctx)
}

// Isolate cuts all traffic to and from target (a stopped node), or restores it.
func (s *Set) Isolate(ctx context.Context, target string, on bool) error {
	s.mu.Lock()
	if s.isolated == nil {
		s.isolated = map[string]bool{}
	}
	if on {
		s.isolated[target] = true
	} else {
		delete(s.isolated, target)
	}
	s.mu.Unlock()
	return s.Apply(ctx)
}

// Partitions lists the active partitions.
func (s *Set) Partitions() []Partition {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Partition
	for p := range s.partitions {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].A+out[i].B < out[j].A+out[j].B })
	return out
}

// Apply rewrites the table from the current faults, resolving targets anew.
func (s *Set) Apply(ctx context.Context) error {
	rules, err := s.rules()
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, hook := range []string{"forward", "input", "output"} {
		fmt.Fprintf(&b, "  chain %s {\n    type filter hook %s priority -5; policy accept;\n", hook, hook)
		for _, r := range rules {
			b.WriteString("    " + r + "\n")
		}
		b.WriteString("  }\n")
	}
	return nsutil.NFT(ctx, s.NetNS, nsutil.ReplaceTable("inet", Table, b.String()))
}

func (s *Set) rules() ([]string, error) {
	var out []string
	for _, p := range s.Partitions() {
		a, err := s.Resolve(p.A)
		if err != nil {
			return nil, err
		}
		b, err := s.Resolve(p.B)
		if err != nil {
			return nil, err
		}
		if len(a) == 0 || len(b) == 0 {
			continue // a target with no address yet: nothing to cut
		}
		out = append(out,
			fmt.Sprintf("ip saddr { %s } ip daddr { %s } drop", strings.Join(a, ", "), strings.Join(b, ", ")),
			fmt.Sprintf("ip saddr { %s } ip daddr { %s } drop", strings.Join(b, ", "), strings.Join(a, ", ")))
	}
	s.mu.Lock()
	var iso []string
	for t := range s.isolated {
		iso = append(iso, t)
	}
	s.mu.Unlock()
	sort.Strings(iso)
	for _, t := range iso {
		c, err := s.Resolve(t)
		if err != nil || len(c) == 0 {
			continue
		}
		set := strings.Join(c, ", ")
		out = append(out, fmt.Sprintf("ip saddr { %s } drop", set), fmt.Sprintf("ip daddr { %s } drop", set))
	}
	return out, nil
}
