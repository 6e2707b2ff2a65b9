package v1alpha1

// ServiceKind names a role Service's selection: rw (the primary), ro (the
// routable replicas) or r (every routable site, the primary included).
// +kubebuilder:validation:Enum=rw;ro;r
type ServiceKind string

const (
	// ServiceRW selects the active site's Pods: "<group>-primary".
	ServiceRW ServiceKind = "rw"
	// ServiceRO selects the routable replicas: "<group>-replicas".
	ServiceRO ServiceKind = "ro"
	// ServiceR selects every routable site: "<group>-any".
	ServiceR ServiceKind = "r"
)

// ServiceUpdateStrategy says how an additional Service's template meets the defaults.
// +kubebuilder:validation:Enum=patch;replace
type ServiceUpdateStrategy string

const (
	// ServiceUpdatePatch merges the Service's template onto its role's
	// default Service, spec.services.template included.
	ServiceUpdatePatch ServiceUpdateStrategy = "patch"
	// ServiceUpdateReplace renders the Service from its own template only:
	// spec.services.template does not apply to it.
	ServiceUpdateReplace ServiceUpdateStrategy = "replace"
)

// ServiceType is the Kubernetes Service type a role Service may take.
// ExternalName is not offered: it has no selector.
// +kubebuilder:validation:Enum=ClusterIP;NodePort;LoadBalancer
type ServiceType string

// ServicesSpec shapes the role Services applications connect through
// (docs/routing.md).
// +kubebuilder:validation:XValidation:rule="!has(self.additional) || self.additional.all(a, self.additional.exists_one(b, b.name == a.name))",message="services.additional names must be unique"
type ServicesSpec struct {
	// DisabledDefaultServices lists default Services not to make: ro
	// (<group>-replicas) and r (<group>-any). The primary Service cannot
	// be disabled. A listed Service that exists is deleted.
	// +kubebuilder:validation:MaxItems=2
	// +kubebuilder:validation:items:XValidation:rule="self != 'rw'",message="the primary Service (rw) cannot be disabled"
	// +listType=set
	// +optional
	DisabledDefaultServices []ServiceKind `json:"disabledDefaultServices,omitempty"`

	// Template is merged onto every default Service. The selector and
	// ports stay the operator's.
	// +optional
	Template *ServiceTemplate `json:"template,omitempty"`

	// Additional Services, each named <group>-<name> and routed to a role.
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Additional []AdditionalService `json:"additional,omitempty"`
}

// AdditionalService is one extra Service routed to a role.
type AdditionalService struct {
	// Name is the Service's name after "<group>-". It cannot be primary,
	// replicas or any, nor a site's name, nor dragonfly or end in
	// -dragonfly: those Services are the operator's.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=40
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="services.additional name must be a DNS label: lower-case letters, digits and '-', starting and ending with a letter or digit"
	// +kubebuilder:validation:XValidation:rule="!(self in ['primary', 'replicas', 'any'])",message="services.additional name cannot be primary, replicas or any: the default Services are named so"
	// +kubebuilder:validation:XValidation:rule="self != 'dragonfly' && !self.endsWith('-dragonfly')",message="services.additional name cannot be dragonfly or end in -dragonfly: the cache's Services are named so"
	Name string `json:"name"`

	// SelectorType is the role the Service routes to: rw, ro or r.
	SelectorType ServiceKind `json:"selectorType"`

	// UpdateStrategy is patch (merge onto the role's default Service) or
	// replace (this template only).
	// +kubebuilder:default=patch
	// +optional
	UpdateStrategy ServiceUpdateStrategy `json:"updateStrategy,omitempty"`

	// ServiceTemplate shapes this Service.
	// +optional
	ServiceTemplate *ServiceTemplate `json:"serviceTemplate,omitempty"`
}

// ServiceTemplate is the part of a Service a user may set.
type ServiceTemplate struct {
	// Metadata adds labels and annotations. The operator's own labels win.
	// +optional
	Metadata ServiceTemplateMeta `json:"metadata,omitempty"`
	// Spec sets the Service's type and traffic options.
	// +optional
	Spec ServiceTemplateSpec `json:"spec,omitempty"`
}

// LabelValue is a Kubernetes label value: at most 63 letters, digits,
// '-', '_' or '.', starting and ending with a letter or digit, or empty.
// +kubebuilder:validation:MaxLength=63
// +kubebuilder:validation:Pattern=`^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$`
type LabelValue string

// ServiceTemplateMeta holds a Service's user labels and annotations.
type ServiceTemplateMeta struct {
	// Labels are added to the Service; keys and values as Kubernetes
	// labels allow them.
	// +kubebuilder:validation:MaxProperties=32
	// +kubebuilder:validation:XValidation:rule="self.all(k, size(k) <= 316 && k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$'))",message="services template label keys must be Kubernetes label keys: an optional DNS prefix and '/', then a name of at most 63 letters, digits, '-', '_' or '.'"
	// +optional
	Labels map[string]LabelValue `json:"labels,omitempty"`
	// +kubebuilder:validation:MaxProperties=64
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// ServiceTemplateSpec is the part of a ServiceSpec a user may set.
// +kubebuilder:validation:XValidation:rule="!has(self.externalTrafficPolicy) || (has(self.type) && self.type in ['NodePort', 'LoadBalancer'])",message="externalTrafficPolicy needs type NodePort or LoadBalancer"
// +kubebuilder:validation:XValidation:rule="!has(self.loadBalancerSourceRanges) || (has(self.type) && self.type == 'LoadBalancer')",message="loadBalancerSourceRanges needs type LoadBalancer"
type ServiceTemplateSpec struct {
	// Type is ClusterIP (the default), NodePort or LoadBalancer.
	// +optional
	Type ServiceType `json:"type,omitempty"`
	// ExternalTrafficPolicy is Cluster or Local (NodePort and LoadBalancer only).
	// +kubebuilder:validation:Enum=Cluster;Local
	// +optional
	ExternalTrafficPolicy string `json:"externalTrafficPolicy,omitempty"`
	// SessionAffinity is None or ClientIP.
	// +kubebuilder:validation:Enum=None;ClientIP
	// +optional
	SessionAffinity string `json:"sessionAffinity,omitempty"`
	// LoadBalancerSourceRanges limits a LoadBalancer's clients (CIDRs).
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=43
	// +kubebuilder:validation:items:XValidation:rule="isCIDR(self)",message="loadBalancerSourceRanges entries must be CIDRs such as 10.0.0.0/8 or 2001:db8::/32"
	// +optional
	LoadBalancerSourceRanges []string `json:"loadBalancerSourceRanges,omitempty"`
}

// ReplicationSpec says when a replica is healthy enough to serve reads.
type ReplicationSpec struct {
	// MaxLagSeconds is the most a replica may lag and still be in the
	// read Services (<group>-replicas, <group>-any).
	// +kubebuilder:default=30
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=86400
	// +optional
	MaxLagSeconds int32 `json:"maxLagSeconds"`
}
