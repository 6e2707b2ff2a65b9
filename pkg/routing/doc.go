// Package routing is the operator's Kubernetes-object layer. It renders and
// applies every object a MysqlFailoverGroup asks for, and moves traffic and
// scheduling when the topology changes:
//
//   - Converge: per site a Deployment (mysqld and the fencing sidecar), a PVC,
//     a ConfigMap with my.cnf and a Service; per group the role Services
//     (-primary, -replicas and -any unless disabled, and spec.services
//     .additional, shaped by spec.services templates; roleservices.go), the
//     credentials Secrets, the init SQL Secret and the external-dns
//     DNSEndpoint. Role Services the spec no longer asks for are deleted.
//     An existing Deployment whose rendering changed is left stale for the
//     ordered update.
//   - SiteWorkloads / ApplySiteWorkload: which site Deployments are stale and
//     rolled out, and applying one when the ordered update says so (rollout.go).
//   - SetRoleLabels: the role label on Pods, which the -primary and -replicas
//     Services select on; a demoted Pod loses the routable label with it.
//   - SetReadRoutes: the routable label on Pods, which -replicas and -any
//     select on, as topology.ReadRoutes decided (readroutes.go).
//   - PointDNS: the DNSEndpoint's target.
//   - TaintSite / UntaintSite: the lost-primary taint on a site's nodes.
//
// It talks only to the Kubernetes API. Every object is written with
// server-side apply under the field owner FieldOwner with forced ownership,
// and is owned by its group (except PVCs, which outlive the group so that
// deleting a group never deletes data). Applying an unchanged object is a
// no-op on the server, so Converge writes nothing when nothing changed.
// Each site Deployment carries the SHA-256 of its rendering; the Pod
// template, the SHA-256 of its my.cnf.
//
// InitialSite names the site traffic starts on: the recorded active site, or
// topology.BootstrapSite for a new group; routing makes no topology choice
// of its own.
//
// The my.cnf and init SQL renderers are pure functions. The init SQL is the
// one place outside pkg/mysql that holds SQL: it only bootstraps accounts at
// mysqld start, before any topology verb runs. docs/objects.md describes every
// object in prose.
package routing
