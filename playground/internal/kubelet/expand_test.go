package kubelet

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestExpand(t *testing.T) {
	lookup := envLookup([]string{"USER=app", "PASS=s3cr=t", "EMPTY=", "NESTED=$(USER)"})
	cases := map[string]string{
		"":        "",
		"plain":   "plain",
		"$(USER)": "app",
		"--dsn=$(USER):$(PASS)@unix(/run/mysqld/mysqld.sock)/": "--dsn=app:s3cr=t@unix(/run/mysqld/mysqld.sock)/",
		"$(USER)$(USER)":       "appapp",
		"x$(EMPTY)y":           "xy",
		"$(MISSING)":           "$(MISSING)",
		"a $(MISSING) $(USER)": "a $(MISSING) app",
		"$$(USER)":             "$(USER)",
		"$$$(USER)":            "$app",
		"$$$$":                 "$$",
		"$$":                   "$",
		"cost $5":              "cost $5",
		"$USER":                "$USER",
		"trailing $":           "trailing $",
		"$(USER":               "$(USER",
		"$(":                   "$(",
		"$()":                  "$()",
		"$(NESTED)":            "$(USER)", // values are not expanded again
		"$(USER)$":             "app$",
		"($(USER))":            "(app)",
	}
	for in, want := range cases {
		if got := expand(in, lookup); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLookupVarsLastWins(t *testing.T) {
	vars := [][2]string{{"A", "1"}, {"B", "2"}, {"A", "3"}}
	if got := expand("$(A)-$(B)-$(C)", lookupVars(vars)); got != "3-2-$(C)" {
		t.Errorf("got %q", got)
	}
}

func TestArgvExpands(t *testing.T) {
	c := &container{spec: corev1.Container{
		Image:   "x",
		Command: []string{"/bin/$(PROG)"},
		Args:    []string{"--user=$(USER)", "--literal=$$(USER)", "--unknown=$(NOPE)"},
	}}
	argv, err := c.argv(Image{}, false, envLookup([]string{"PROG=sidecar", "USER=root"}))
	if err != nil {
		t.Fatal(err)
	}
	want := "/bin/sidecar --user=root --literal=$(USER) --unknown=$(NOPE)"
	if got := strings.Join(argv, " "); got != want {
		t.Errorf("argv = %q, want %q", got, want)
	}
	// The image's own entrypoint and default args are not expanded.
	c.spec.Command, c.spec.Args = nil, nil
	argv, err = c.argv(Image{Entrypoint: []string{"prog"}, Cmd: []string{"$(USER)"}}, true, envLookup([]string{"USER=root"}))
	if err != nil || strings.Join(argv, " ") != "prog $(USER)" {
		t.Errorf("image argv = %q, %v", argv, err)
	}
}

func TestQOSClass(t *testing.T) {
	res := func(req, lim string) corev1.ResourceRequirements {
		r := corev1.ResourceRequirements{}
		if req != "" {
			r.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(req), corev1.ResourceMemory: resource.MustParse(req + "Mi")}
		}
		if lim != "" {
			r.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(lim), corev1.ResourceMemory: resource.MustParse(lim + "Mi")}
		}
		return r
	}
	pod := func(rs ...corev1.ResourceRequirements) *corev1.Pod {
		p := &corev1.Pod{}
		for _, r := range rs {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Resources: r})
		}
		return p
	}
	cases := []struct {
		pod  *corev1.Pod
		want corev1.PodQOSClass
	}{
		{pod(res("", "")), corev1.PodQOSBestEffort},
		{pod(res("1", "")), corev1.PodQOSBurstable},
		{pod(res("1", "2")), corev1.PodQOSBurstable},
		{pod(res("1", "1")), corev1.PodQOSGuaranteed},
		{pod(res("", "1")), corev1.PodQOSGuaranteed}, // requests default to limits
		{pod(res("1", "1"), res("", "")), corev1.PodQOSBurstable},
	}
	for i, tc := range cases {
		if got := qosClass(tc.pod); got != tc.want {
			t.Errorf("case %d: %s, want %s", i, got, tc.want)
		}
	}
	kept := pod(res("", ""))
	kept.Status.QOSClass = corev1.PodQOSBurstable // as the API server set it
	if got := qosClass(kept); got != corev1.PodQOSBurstable {
		t.Errorf("the API server's class was not kept: %s", got)
	}
}
