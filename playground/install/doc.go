// Package install puts Bloodraven into a running local cluster the way a user
// would: the Helm chart with `helm install`, a MysqlFailoverGroup applied
// with kubectl, and a wait until the group is healthy and its DNS name
// answers. It also runs a small writer through the group's DNS name, built on
// playground/load. The end-to-end tests, the scenarios and the playground
// CLI share it.
package install
