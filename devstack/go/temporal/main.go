// Command temporal is the devstack's Temporal development server: go.temporal.io/server embedded with
// all four services in one process on a SQLite file, the namespace and its search attributes created
// before the server starts, and the Temporal UI server beside it. It is what `temporal server
// start-dev` of the Temporal CLI does, written here because the CLI's current releases cannot be
// built from the Go module proxy (their cliext module is not served), while the server and UI server
// modules are. Flags keep start-dev's names so the devstack passes the same arguments.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uioptions "github.com/temporalio/ui-server/v2/server/server_options"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/membership/static"
	"go.temporal.io/server/common/metrics"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/common/primitives"
	sqliteschema "go.temporal.io/server/schema/sqlite"
	"go.temporal.io/server/temporal"
)

const (
	clusterName = "active"
	// clusterID is the one cluster's ID (a UUID, as the server wants; fixed, so a restart on the same
	// SQLite file finds the same cluster).
	clusterID = "8a0c3b4e-2f1d-4c6b-9e57-3d2a1f0b6c48"
)

// repeated collects a flag given several times.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

type options struct {
	ip, dbFile, logFormat, logLevel     string
	port, httpPort, uiPort, metricsPort int
	namespaces, pragmas, dynamic, attrs repeated
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "temporal dev server:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	var o options
	fs := flag.NewFlagSet("temporal", flag.ContinueOnError)
	fs.StringVar(&o.ip, "ip", "127.0.0.1", "address the frontend, UI and metrics listen on")
	fs.IntVar(&o.port, "port", 7233, "frontend gRPC port")
	fs.IntVar(&o.httpPort, "http-port", 0, "frontend HTTP port (0: a free one)")
	fs.IntVar(&o.uiPort, "ui-port", 0, "Temporal UI port (0: no UI)")
	fs.IntVar(&o.metricsPort, "metrics-port", 0, "Prometheus metrics port (0: none)")
	fs.StringVar(&o.dbFile, "db-filename", "", "SQLite file (created with the schema when missing; empty: in memory)")
	fs.StringVar(&o.logFormat, "log-format", "json", "json or console")
	fs.StringVar(&o.logLevel, "log-level", "warn", "debug, info, warn or error")
	fs.Var(&o.namespaces, "namespace", "namespace to create (repeatable; default is always created)")
	fs.Var(&o.pragmas, "sqlite-pragma", "SQLite pragma name=value (repeatable)")
	fs.Var(&o.dynamic, "dynamic-config-value", "dynamic config key=JSON value (repeatable)")
	fs.Var(&o.attrs, "search-attribute", "custom search attribute Name=Type (repeatable)")
	// `server start-dev` as the Temporal CLI spells it, so the devstack's arguments work unchanged.
	if len(args) >= 2 && args[0] == "server" && args[1] == "start-dev" {
		args = args[2:]
	}
	if err := fs.Parse(args); err != nil {
		return err
	}

	logger := log.NewZapLogger(log.BuildZapLogger(log.Config{Level: o.logLevel, Format: o.logFormat}))
	sql, err := o.sqlConfig()
	if err != nil {
		return err
	}
	conf, err := o.serverConfig(sql)
	if err != nil {
		return err
	}
	dynamic, err := o.dynamicConfig()
	if err != nil {
		return err
	}
	hosts := map[primitives.ServiceName]static.Hosts{}
	for name, service := range conf.Services {
		hosts[primitives.ServiceName(name)] = static.SingleLocalHost(net.JoinHostPort(o.ip, strconv.Itoa(service.RPC.GRPCPort)))
	}
	server, err := temporal.NewServer(
		temporal.WithConfig(conf),
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithStaticHosts(hosts),
		temporal.WithLogger(logger),
		temporal.WithAuthorizer(authorization.NewNoopAuthorizer()),
		temporal.WithClaimMapper(func(*config.Config) authorization.ClaimMapper { return authorization.NewNoopClaimMapper() }),
		temporal.WithDynamicConfigClient(dynamic),
	)
	if err != nil {
		return fmt.Errorf("building the server: %w", err)
	}
	var ui *uiserver.Server
	if o.uiPort != 0 {
		ui = uiserver.NewServer(uioptions.WithConfigProvider(&uiconfig.Config{
			Host:                o.ip,
			Port:                o.uiPort,
			TemporalGRPCAddress: net.JoinHostPort(o.ip, strconv.Itoa(o.port)),
			EnableUI:            true,
			CORS:                uiconfig.CORS{CookieInsecure: true},
			HideLogs:            true,
		}))
	}
	if err := server.Start(); err != nil {
		return fmt.Errorf("starting the server: %w", err)
	}
	uiFailed := make(chan error, 1)
	if ui != nil {
		// The UI server's Start blocks until it stops.
		go func() { uiFailed <- ui.Start() }()
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	select {
	case <-stop:
	case err = <-uiFailed:
		err = fmt.Errorf("the UI server stopped: %w", err)
	}
	if ui != nil {
		ui.Stop()
	}
	if stopErr := server.Stop(); stopErr != nil && err == nil {
		err = stopErr
	}
	return err
}

func (o *options) sqlConfig() (*config.SQL, error) {
	sql := &config.SQL{PluginName: sqliteplugin.PluginName, ConnectAttributes: map[string]string{}}
	if o.dbFile == "" {
		sql.DatabaseName = "homeostat"
		sql.ConnectAttributes["mode"] = "memory"
		sql.ConnectAttributes["cache"] = "shared"
	} else {
		sql.DatabaseName = o.dbFile
		sql.ConnectAttributes["mode"] = "rwc"
	}
	for _, p := range o.pragmas {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			return nil, fmt.Errorf("--sqlite-pragma %q: want name=value", p)
		}
		sql.ConnectAttributes[k] = v
	}
	fresh := o.dbFile == ""
	if !fresh {
		if _, err := os.Stat(o.dbFile); errors.Is(err, os.ErrNotExist) {
			fresh = true
		}
	}
	if fresh {
		if err := sqliteschema.SetupSchema(sql); err != nil {
			return nil, fmt.Errorf("creating the SQLite schema: %w", err)
		}
	}
	attrs := map[string]enumspb.IndexedValueType{}
	for _, a := range o.attrs {
		name, kind, ok := strings.Cut(a, "=")
		t, err := enumspb.IndexedValueTypeFromString(kind)
		if !ok || err != nil {
			return nil, fmt.Errorf("--search-attribute %q: want Name=Type (Keyword, Text, Int, Double, Bool, Datetime, KeywordList)", a)
		}
		attrs[name] = t
	}
	var namespaces []*sqliteschema.NamespaceConfig
	for _, name := range append([]string{"default"}, o.namespaces...) {
		ns, err := sqliteschema.NewNamespaceConfig(clusterName, name, false, attrs)
		if err != nil {
			return nil, fmt.Errorf("namespace %s: %w", name, err)
		}
		namespaces = append(namespaces, ns)
	}
	if err := sqliteschema.CreateNamespaces(sql, namespaces...); err != nil {
		return nil, fmt.Errorf("creating namespaces: %w", err)
	}
	return sql, nil
}

func (o *options) serverConfig(sql *config.SQL) (*config.Config, error) {
	frontend := net.JoinHostPort(o.ip, strconv.Itoa(o.port))
	httpPort := o.httpPort
	if httpPort == 0 {
		p, err := freePort(o.ip)
		if err != nil {
			return nil, err
		}
		httpPort = p
	}
	conf := &config.Config{}
	conf.Global.Membership.MaxJoinDuration = 30 * time.Second
	conf.Global.Membership.BroadcastAddress = o.ip
	if o.metricsPort != 0 {
		conf.Global.Metrics = &metrics.Config{Prometheus: &metrics.PrometheusConfig{
			ListenAddress: net.JoinHostPort(o.ip, strconv.Itoa(o.metricsPort)),
			HandlerPath:   "/metrics",
		}}
	}
	conf.Persistence.DefaultStore = "sqlite"
	conf.Persistence.VisibilityStore = "sqlite"
	conf.Persistence.NumHistoryShards = 1
	conf.Persistence.DataStores = map[string]config.DataStore{"sqlite": {SQL: sql}}
	conf.ClusterMetadata = &cluster.Config{
		FailoverVersionIncrement: 10,
		MasterClusterName:        clusterName,
		CurrentClusterName:       clusterName,
		ClusterInformation: map[string]cluster.ClusterInformation{clusterName: {
			Enabled:                true,
			InitialFailoverVersion: 1,
			RPCAddress:             frontend,
			HTTPAddress:            net.JoinHostPort(o.ip, strconv.Itoa(httpPort)),
			ClusterID:              clusterID,
		}},
	}
	conf.DCRedirectionPolicy.Policy = "noop"
	conf.Services = map[string]config.Service{}
	for _, name := range temporal.DefaultServices {
		var service config.Service
		service.RPC.BindOnIP = o.ip
		if name == string(primitives.FrontendService) {
			service.RPC.GRPCPort = o.port
			service.RPC.HTTPPort = httpPort
		} else {
			p, err := internalPort(o.ip)
			if err != nil {
				return nil, err
			}
			service.RPC.GRPCPort = p
		}
		conf.Services[name] = service
	}
	conf.Archival.History.State = "disabled"
	conf.Archival.Visibility.State = "disabled"
	conf.NamespaceDefaults.Archival.History.State = "disabled"
	conf.NamespaceDefaults.Archival.Visibility.State = "disabled"
	conf.PublicClient.HostPort = frontend
	return conf, nil
}

func (o *options) dynamicConfig() (dynamicconfig.StaticClient, error) {
	// The dev server's own defaults: a larger mutable-state cache and more visibility requests per
	// second than a production frontend allows one namespace.
	values := dynamicconfig.StaticClient{
		dynamicconfig.HistoryCacheHostLevelMaxSize.Key():                 8096,
		dynamicconfig.FrontendMaxNamespaceVisibilityRPSPerInstance.Key(): 100,
	}
	for _, kv := range o.dynamic {
		k, raw, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("--dynamic-config-value %q: want key=value", kv)
		}
		var v any
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			v = raw // a bare word is a string
		}
		// JSON numbers decode as float64, which the server's int settings refuse (silently keeping
		// their default): a whole number is an int, as the server's own YAML file would give it.
		if f, isNumber := v.(float64); isNumber && f == float64(int(f)) {
			v = int(f)
		}
		values[dynamicconfig.MakeKey(k)] = v
	}
	return values, nil
}

// internalPort finds a free TCP port for the history, matching or worker service (ports nobody else
// needs to know) below the kernel's ephemeral range. A port the kernel hands out for ":0" is in that
// range, and between this check and the service's bind any outgoing connection on the machine may
// take it as its local port (seen with the cluster's servers starting beside this one); below the
// range only another listener can.
func internalPort(ip string) (int, error) {
	low := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > 12000 {
				low = n
			}
		}
	}
	for range 200 {
		p := 10000 + rand.IntN(low-10000)
		if l, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(p))); err == nil {
			l.Close()
			return p, nil
		}
	}
	return freePort(ip)
}

// freePort asks the kernel for a free TCP port on ip.
func freePort(ip string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
