// Package chartcheck holds tests of what the Helm chart ships besides
// templates: the alert rules and the Grafana dashboard must name only
// metrics the operator and sidecars declare, and the dashboard must be a
// well-formed Grafana document. (promtool checks and unit-tests the rules
// themselves: `make check-alerts`.)
package chartcheck
