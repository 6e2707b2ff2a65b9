package faults

import (
	"fmt"
	"strings"
	"testing"
)

func TestRules(t *testing.T) {
	s := &Set{Resolve: func(target string) ([]string, error) {
		switch target {
		case "a":
			return []string{"10.250.1.0/24"}, nil
		case "b":
			return []string{"10.250.2.0/24"}, nil
		case "gone":
			return nil, nil
		}
		return nil, fmt.Errorf("unknown %q", target)
	}}
	s.partitions = map[Partition]bool{norm("b", "a"): true, norm("a", "gone"): true}
	s.isolated = map[string]bool{"b": true}
	rules, err := s.rules()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"ip saddr { 10.250.1.0/24 } ip daddr { 10.250.2.0/24 } drop",
		"ip saddr { 10.250.2.0/24 } ip daddr { 10.250.1.0/24 } drop",
		"ip saddr { 10.250.2.0/24 } drop",
		"ip daddr { 10.250.2.0/24 } drop",
	}
	if strings.Join(rules, "\n") != strings.Join(want, "\n") {
		t.Fatalf("rules:\n%s\nwant:\n%s", strings.Join(rules, "\n"), strings.Join(want, "\n"))
	}
}
