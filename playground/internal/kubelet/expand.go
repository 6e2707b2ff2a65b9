package kubelet

import (
	"strings"
)

// expand replaces the variable references of s as Kubernetes does in a
// container's command, args and env values: $(NAME) becomes the value lookup
// finds, and stays as written when lookup finds none; $$ is a literal $, so
// $$(NAME) gives $(NAME) unexpanded; any other $ is kept as is, and so is a
// $( without its closing parenthesis.
func expand(s string, lookup func(string) (string, bool)) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch next := s[i+1]; next {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString("$(")
				i++
				continue
			}
			name := s[i+2 : i+2+end]
			if v, ok := lookup(name); ok {
				b.WriteString(v)
			} else {
				b.WriteString("$(" + name + ")")
			}
			i += 2 + end
		default:
			b.WriteByte('$')
			b.WriteByte(next)
			i++
		}
	}
	return b.String()
}

// envLookup finds a variable among KEY=VALUE entries.
func envLookup(env []string) func(string) (string, bool) {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return func(name string) (string, bool) {
		v, ok := m[name]
		return v, ok
	}
}

// expandAll expands every element of list.
func expandAll(list []string, lookup func(string) (string, bool)) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = expand(s, lookup)
	}
	return out
}
