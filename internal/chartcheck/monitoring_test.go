package chartcheck

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const chart = "../../charts/bloodraven/files"

var (
	declared = regexp.MustCompile(`(?:Name:\s*|=\s*)"(bloodraven_[a-z_]+)"`)
	named    = regexp.MustCompile(`bloodraven_[a-z_]+`)
)

// declaredMetrics is every metric name the Go code declares.
func declaredMetrics(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	err := filepath.WalkDir("../..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range declared.FindAllStringSubmatch(string(b), -1) {
			out[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 10 {
		t.Fatalf("found only %d declared metrics: the scan is broken", len(out))
	}
	return out
}

// checkNames fails for every metric text names that the code does not
// declare (histogram series by their base name).
func checkNames(t *testing.T, what, text string, known map[string]bool) {
	t.Helper()
	for _, n := range named.FindAllString(text, -1) {
		base := n
		for _, suf := range []string{"_bucket", "_count", "_sum"} {
			if b, ok := strings.CutSuffix(n, suf); ok && known[b] {
				base = b
			}
		}
		if !known[base] {
			t.Errorf("%s names %s, which no code declares", what, n)
		}
	}
}

func TestAlertsNameDeclaredMetrics(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(chart, "alerts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	checkNames(t, "alerts.yaml", string(b), declaredMetrics(t))
}

// TestDashboard: the dashboard is a Grafana document whose every panel
// has a title and queries, on the Prometheus datasource variable, naming
// declared metrics only.
func TestDashboard(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(chart, "dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Title, UID    string
		SchemaVersion int `json:"schemaVersion"`
		Panels        []struct {
			ID         int
			Type       string
			Title      string
			Datasource struct{ UID string }
			Targets    []struct {
				RefID string `json:"refId"`
				Expr  string
			}
		}
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("dashboard.json: %v", err)
	}
	if d.Title == "" || d.UID == "" || d.SchemaVersion == 0 || len(d.Panels) == 0 {
		t.Fatalf("dashboard lacks a title, uid, schema version or panels: %+v", d)
	}
	known := declaredMetrics(t)
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if p.Title == "" || p.Type == "" || len(p.Targets) == 0 || p.Datasource.UID != "${datasource}" || ids[p.ID] {
			t.Errorf("panel %d %q: needs a unique id, a type, a title, queries and the datasource variable", p.ID, p.Title)
		}
		ids[p.ID] = true
		for _, q := range p.Targets {
			if q.RefID == "" || q.Expr == "" {
				t.Errorf("panel %q: a query without refId or expression", p.Title)
			}
			checkNames(t, "panel "+p.Title, q.Expr, known)
		}
	}
}
