package routing

import (
	"fmt"
	"hash/fnv"

	"github.com/shipstream/bloodraven/apis/v1alpha1"
)

// FieldOwner is the server-side apply field manager of every object routing writes.
const FieldOwner = "bloodraven"

// Account roles: the four MySQL accounts of a group, each with a Secret.
const (
	AccountOperator    = "operator"
	AccountReplication = "replication"
	AccountApplication = "application"
	AccountMonitor     = "monitor"
)

// Secret keys of a credentials Secret. SecretKeyDatabase is optional and only
// read from the application Secret: the schema the application account may use.
const (
	SecretKeyUsername = "username"
	SecretKeyPassword = "password"
	SecretKeyDatabase = "database"
)

// Ports of a site's Pod and Services.
const (
	MySQLPort       = 3306
	SidecarPort     = 8080
	PortNameMySQL   = "mysql"
	PortNameSidecar = "sidecar"
)

// Container names of a site's Pod.
const (
	ContainerMysqld  = "mysqld"
	ContainerSidecar = "sidecar"
)

// Files and folders inside a site's Pod.
const (
	DataDir        = "/var/lib/mysql"
	ConfigDir      = "/etc/mysql/bloodraven"
	ConfigFile     = ConfigDir + "/my.cnf"
	InitDir        = "/etc/mysql/bloodraven-init"
	InitFile       = InitDir + "/init.sql"
	RunDir         = "/var/run/mysqld"
	SocketPath     = RunDir + "/mysqld.sock"
	configMapKey   = "my.cnf"
	initSecretKey  = "init.sql"
	labelManagedBy = "app.kubernetes.io/managed-by"
	labelComponent = "app.kubernetes.io/component"
	// ZoneLabel is the well-known node label a site's Zone selects on.
	ZoneLabel = "topology.kubernetes.io/zone"
	// ViewKeysDir holds the accepted public view keys in the sidecar
	// container (the ViewKeysConfigMap, read-only); ViewKeysPath is the file.
	ViewKeysDir  = "/etc/bloodraven/view-keys"
	ViewKeysPath = ViewKeysDir + "/" + ViewKeysKey
)

// Signed views (pkg/protocol): the operator keeps its signing key in the
// ViewSigningSecret of its own namespace, and publishes the public keys
// sidecars accept as the ViewKeysConfigMap of every group's namespace.
const (
	ViewSigningSecret = "bloodraven-view-signing"
	// ViewSigningKey holds the current private key (PKCS #8 PEM);
	// ViewAcceptedKey, optional, one more public key (PEM) that sidecars
	// accept during a rotation.
	ViewSigningKey    = "signing.key"
	ViewAcceptedKey   = "accepted.pub"
	ViewKeysConfigMap = "bloodraven-view-keys"
	ViewKeysKey       = "keys.pem"
	volViewKeys       = "view-keys"
	viewKeysComponent = "view-keys"
)

// SiteName names a site's Deployment and Service: "<group>-<site>".
func SiteName(group, site string) string { return group + "-" + site }

// PrimaryServiceName names the Service that selects the primary: "<group>-primary".
func PrimaryServiceName(group string) string { return group + "-" + v1alpha1.RolePrimary }

// ReplicasServiceName names the Service that selects the replicas: "<group>-replicas".
func ReplicasServiceName(group string) string { return group + "-replicas" }

// AnyServiceName names the Service that selects every routable site: "<group>-any".
func AnyServiceName(group string) string { return group + "-any" }

// PVCName names a site's data volume claim: "<group>-<site>-data".
func PVCName(group, site string) string { return SiteName(group, site) + "-data" }

// ConfigMapName names a site's my.cnf ConfigMap: "<group>-<site>-config".
func ConfigMapName(group, site string) string { return SiteName(group, site) + "-config" }

// SecretName is the default name of an account's credentials Secret:
// "<group>-<role>", used when spec.mysql.credentials does not name one.
func SecretName(group, role string) string { return group + "-" + role }

// InitSecretName names the Secret holding the rendered init SQL: "<group>-init-sql".
func InitSecretName(group string) string { return group + "-init-sql" }

// DNSEndpointName names the group's DNSEndpoint: the group's own name.
func DNSEndpointName(group string) string { return group }

// SiteServiceHost is the in-cluster DNS name of a site's Service, the
// address the operator and peer sidecars reach a site by.
func SiteServiceHost(namespace, group, site string) string {
	return SiteName(group, site) + "." + namespace + ".svc"
}

// CredentialSecretName resolves an account's Secret name: the one
// spec.mysql.credentials names, else SecretName.
func CredentialSecretName(g *v1alpha1.MysqlFailoverGroup, role string) string {
	c := g.Spec.MySQL.Credentials
	refs := map[string]*v1alpha1.SecretRef{
		AccountOperator:    c.Operator,
		AccountReplication: c.Replication,
		AccountApplication: c.Application,
		AccountMonitor:     c.Monitor,
	}
	if ref := refs[role]; ref != nil && ref.Name != "" {
		return ref.Name
	}
	return SecretName(g.Name, role)
}

// ServerID is a site's mysqld server_id: the FNV-1a hash of the site name,
// mapped into 1..2^32-1. It depends on the name only, so reordering
// spec.sites (a priority change) never changes a running server's identity.
// Converge refuses a group in which two sites hash alike.
func ServerID(site string) uint32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(site))
	return h.Sum32()%(1<<32-1) + 1
}

// checkServerIDs reports two sites of g with the same ServerID.
func checkServerIDs(g *v1alpha1.MysqlFailoverGroup) error {
	seen := map[uint32]string{}
	for _, s := range g.Spec.Sites {
		id := ServerID(s.Name)
		if other, dup := seen[id]; dup {
			return fmt.Errorf("sites %s and %s share server_id %d: rename one", other, s.Name, id)
		}
		seen[id] = s.Name
	}
	return nil
}

// findSite returns the named site of g.
func findSite(g *v1alpha1.MysqlFailoverGroup, name string) (v1alpha1.Site, error) {
	for _, s := range g.Spec.Sites {
		if s.Name == name {
			return s, nil
		}
	}
	return v1alpha1.Site{}, fmt.Errorf("group %s/%s has no site %q", g.Namespace, g.Name, name)
}

// groupLabels are on every object routing makes for g.
func groupLabels(g *v1alpha1.MysqlFailoverGroup) map[string]string {
	return map[string]string{v1alpha1.LabelGroup: g.Name, labelManagedBy: FieldOwner}
}

// siteLabels are groupLabels plus the site.
func siteLabels(g *v1alpha1.MysqlFailoverGroup, site string) map[string]string {
	l := groupLabels(g)
	l[v1alpha1.LabelSite] = site
	return l
}

// siteSelector selects a site's Pods, whatever their role.
func siteSelector(g *v1alpha1.MysqlFailoverGroup, site string) map[string]string {
	return map[string]string{v1alpha1.LabelGroup: g.Name, v1alpha1.LabelSite: site}
}

// roleSelector selects the group's Pods that hold role.
func roleSelector(g *v1alpha1.MysqlFailoverGroup, role string) map[string]string {
	return map[string]string{v1alpha1.LabelGroup: g.Name, v1alpha1.LabelRole: role}
}
