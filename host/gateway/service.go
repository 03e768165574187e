package gateway

import "github.com/flowgate/flowgate/host/service"

// ServiceConfig says how to install the gateway as a service of the
// operating system (service.Config); ServicePlan is what installing or
// uninstalling it does, in order (service.Plan): print it, or Apply it.
type (
	ServiceConfig = service.Config
	ServicePlan   = service.Plan
)

// InstallService returns the plan that writes the service file (a
// systemd unit, a launchd property list), loads it and starts the
// gateway, now and at every boot or login (service.Install).
func InstallService(c ServiceConfig) (ServicePlan, error) { return service.Install(c) }

// UninstallService returns the plan that stops the gateway (never its
// tasks), unloads the service and removes its file (service.Uninstall).
func UninstallService(c ServiceConfig) (ServicePlan, error) { return service.Uninstall(c) }
