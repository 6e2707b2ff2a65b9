package supervisor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/shipstream/bloodraven/playground/internal/nsutil"
	"github.com/shipstream/bloodraven/playground/internal/pki"
	"github.com/shipstream/bloodraven/playground/internal/podexec"
	"github.com/shipstream/bloodraven/playground/internal/proc"
)

func (s *Supervisor) pkiDir() string { return s.cfg.path("pki") }

func (s *Supervisor) setupPKI(context.Context) error {
	dir := s.pkiDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("pki folder: %w", err)
	}
	ca, err := pki.NewCA(dir)
	if err != nil {
		return err
	}
	apiHosts := []string{APIServerIP, KubernetesIP, "127.0.0.1", "localhost", "kubernetes", "kubernetes.default",
		"kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}
	certs := []struct {
		name, cn string
		orgs     []string
		hosts    []string
	}{
		{"apiserver", "kube-apiserver", nil, apiHosts},
		{"admin", "bloodraven-admin", []string{"system:masters"}, nil},
		{"controller-manager", "system:kube-controller-manager", []string{"system:masters"}, nil},
		{"scheduler", "system:kube-scheduler", nil, nil},
		{"apiserver-kubelet-client", "kube-apiserver-kubelet-client", []string{"system:masters"}, nil},
	}
	for _, st := range s.cfg.sites() {
		certs = append(certs, struct {
			name, cn string
			orgs     []string
			hosts    []string
		}{"node-" + st.name, "system:node:" + st.name, []string{"system:nodes"}, []string{st.nodeIP.String(), st.name}})
	}
	for _, c := range certs {
		if err := ca.Issue(c.name, c.cn, c.orgs, c.hosts); err != nil {
			return err
		}
	}
	if err := pki.ServiceAccountKey(dir); err != nil {
		return err
	}
	return s.writeKubeconfigs(ca)
}

func (s *Supervisor) writeKubeconfigs(ca *pki.CA) error {
	inside := fmt.Sprintf("https://%s:%d", APIServerIP, APIPort)
	s.info.Kubeconfig = s.cfg.path("kubeconfig")
	s.info.CoreKubeconfig = filepath.Join(s.pkiDir(), "admin-core.kubeconfig")
	files := []struct{ path, server, user string }{
		{s.info.Kubeconfig, s.info.Server, "admin"},
		{s.info.CoreKubeconfig, inside, "admin"},
		{filepath.Join(s.pkiDir(), "controller-manager.kubeconfig"), inside, "controller-manager"},
		{filepath.Join(s.pkiDir(), "scheduler.kubeconfig"), inside, "scheduler"},
	}
	for _, f := range files {
		if err := ca.Kubeconfig(f.path, f.server, f.user); err != nil {
			return err
		}
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", s.info.Kubeconfig)
	if err != nil {
		return fmt.Errorf("load kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = 200, 400
	s.rest = cfg
	s.client, err = kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	return nil
}

// startCore starts a program inside the core namespace, logging to logs/name.log.
func (s *Supervisor) startCore(name string, argv []string) (*proc.Proc, error) {
	logs := s.cfg.path("logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return nil, fmt.Errorf("logs folder: %w", err)
	}
	p, err := proc.Start(proc.Spec{
		Name: name, Log: filepath.Join(logs, name+".log"), SpecDir: logs,
		Exec: podexec.Spec{NetNS: nsutil.Path(s.cfg.ClusterID), Argv: argv, Env: os.Environ()},
	})
	if err != nil {
		return nil, err
	}
	s.procs = append(s.procs, p)
	return p, nil
}

func (s *Supervisor) bin(name string) string { return filepath.Join(s.cfg.KubeBinDir, name) }

// waitTCP waits until addr in the core namespace accepts connections.
func (s *Supervisor) waitTCP(ctx context.Context, p *proc.Proc, addr string, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	return p.WaitTCP(ctx, func(ctx context.Context) error {
		c, err := nsutil.Dial(ctx, s.cfg.ClusterID, "tcp", addr)
		if err == nil {
			c.Close()
		}
		return err
	})
}

func (s *Supervisor) startEtcd(ctx context.Context) error {
	dir := s.cfg.EtcdDir()
	_ = os.RemoveAll(dir)
	p, err := s.startCore("etcd", []string{s.bin("etcd"),
		"--name=etcd", "--data-dir=" + dir,
		"--listen-client-urls=http://127.0.0.1:2379", "--advertise-client-urls=http://127.0.0.1:2379",
		"--listen-peer-urls=http://127.0.0.1:2380", "--initial-advertise-peer-urls=http://127.0.0.1:2380",
		"--initial-cluster=etcd=http://127.0.0.1:2380", "--logger=zap", "--log-level=warn",
	})
	if err != nil {
		return err
	}
	return s.waitTCP(ctx, p, "127.0.0.1:2379", 20*time.Second)
}

func (s *Supervisor) startAPIServer(ctx context.Context) error {
	d := s.pkiDir()
	f := func(n string) string { return filepath.Join(d, n) }
	p, err := s.startCore("kube-apiserver", []string{s.bin("kube-apiserver"),
		"--etcd-servers=http://127.0.0.1:2379",
		"--bind-address=0.0.0.0", fmt.Sprintf("--secure-port=%d", APIPort), "--advertise-address=" + APIServerIP,
		"--tls-cert-file=" + f("apiserver.crt"), "--tls-private-key-file=" + f("apiserver.key"),
		"--client-ca-file=" + f("ca.crt"),
		"--service-account-key-file=" + f("sa.pub"), "--service-account-signing-key-file=" + f("sa.key"),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-cluster-ip-range=" + ServiceCIDR, "--authorization-mode=Node,RBAC",
		"--kubelet-client-certificate=" + f("apiserver-kubelet-client.crt"),
		"--kubelet-client-key=" + f("apiserver-kubelet-client.key"),
		"--kubelet-preferred-address-types=InternalIP", "--allow-privileged=true",
		"--default-not-ready-toleration-seconds=20", "--default-unreachable-toleration-seconds=20",
		"--profiling=false", "--v=1",
	})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	return p.WaitTCP(ctx, func(ctx context.Context) error {
		body, err := s.client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err != nil {
			return err
		}
		if strings.TrimSpace(string(body)) != "ok" {
			return fmt.Errorf("readyz: %s", body)
		}
		return nil
	})
}

func (s *Supervisor) startControllers(context.Context) error {
	d := s.pkiDir()
	f := func(n string) string { return filepath.Join(d, n) }
	cmk := f("controller-manager.kubeconfig")
	if _, err := s.startCore("kube-controller-manager", []string{s.bin("kube-controller-manager"),
		"--kubeconfig=" + cmk, "--authentication-kubeconfig=" + cmk, "--authorization-kubeconfig=" + cmk,
		"--leader-elect=false", "--bind-address=127.0.0.1",
		"--service-account-private-key-file=" + f("sa.key"), "--root-ca-file=" + f("ca.crt"),
		"--use-service-account-credentials=false", "--service-cluster-ip-range=" + ServiceCIDR,
		"--node-monitor-grace-period=20s",
		"--node-monitor-period=2s", "--concurrent-deployment-syncs=10", "--v=1",
	}); err != nil {
		return err
	}
	sk := f("scheduler.kubeconfig")
	_, err := s.startCore("kube-scheduler", []string{s.bin("kube-scheduler"),
		"--kubeconfig=" + sk, "--authentication-kubeconfig=" + sk, "--authorization-kubeconfig=" + sk,
		"--leader-elect=false", "--bind-address=127.0.0.1", "--v=1",
	})
	return err
}

// waitServiceAccount waits until Pods can be made in the default namespace.
func (s *Supervisor) waitServiceAccount(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		_, err := s.client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("default service account: %w (last: %w)", ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// kubectl runs the cached kubectl against the cluster from the host.
func (s *Supervisor) kubectl(ctx context.Context, args ...string) error {
	c := exec.CommandContext(ctx, s.bin("kubectl"), append([]string{"--kubeconfig=" + s.info.Kubeconfig}, args...)...)
	out, err := c.CombinedOutput()
	if err != nil {
		return fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return nil
}
