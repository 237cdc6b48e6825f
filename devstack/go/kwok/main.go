// Command kwok is sigs.k8s.io/kwok's kwok, built from the pinned module, with one addition for the
// devstack: `kwok default-stages` prints the Node and Pod stages that kwokctl gives its clusters
// (nodes initialise and renew their Leases; Pods become Running and Ready, complete and are deleted),
// taken from the module's own embedded stage files so they always match the pinned version. The
// devstack writes them to kwok's `--config` file: kwok run without stages simulates nothing.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	nodefast "sigs.k8s.io/kwok/kustomize/stage/node/fast"
	nodeheartbeatwithlease "sigs.k8s.io/kwok/kustomize/stage/node/heartbeat-with-lease"
	podfast "sigs.k8s.io/kwok/kustomize/stage/pod/fast"
	"sigs.k8s.io/kwok/pkg/config"
	"sigs.k8s.io/kwok/pkg/kwok/cmd"
	"sigs.k8s.io/kwok/pkg/log"
	"sigs.k8s.io/kwok/pkg/utils/signals"
)

func main() {
	if len(os.Args) == 2 && os.Args[1] == "default-stages" {
		stages := []string{
			nodefast.DefaultNodeInit,
			nodeheartbeatwithlease.DefaultNodeHeartbeatWithLease,
			podfast.DefaultPodReady,
			podfast.DefaultPodComplete,
			podfast.DefaultPodDelete,
		}
		for i, s := range stages {
			stages[i] = strings.TrimSpace(s)
		}
		fmt.Println(strings.Join(stages, "\n---\n"))
		return
	}

	// The rest is kwok's own entry point (cmd/kwok), unchanged in behaviour.
	flagset := pflag.NewFlagSet("global", pflag.ContinueOnError)
	flagset.ParseErrorsAllowlist.UnknownFlags = true
	flagset.Usage = func() {}

	ctx := signals.SetupSignalContext()
	ctx, logger := log.InitFlags(ctx, flagset)

	ctx, err := config.InitFlags(ctx, flagset)
	if err != nil {
		_, _ = os.Stderr.Write([]byte(flagset.FlagUsages()))
		logger.Error("Init config flags", "err", err)
		os.Exit(1)
	}

	command := cmd.NewCommand(ctx)
	command.PersistentFlags().AddFlagSet(flagset)
	if err := command.ExecuteContext(ctx); err != nil {
		logger.Error("Execute exit", "err", err)
		os.Exit(1)
	}
}
