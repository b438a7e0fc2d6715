package check

import (
	"testing"

	"github.com/jadpo/jadpo/check/ir"
)

// TestSameDriversWithRules: two copies of the same contracts are the same
// drivers though their rules are functions, never DeepEqual (so a check
// handed the contracts anew still takes the app it kept); a contract with
// other rules is not.
func TestSameDriversWithRules(t *testing.T) {
	rules := func(ir.ConnectionSettings) []ir.SettingProblem { return nil }
	other := func(ir.ConnectionSettings) []ir.SettingProblem { return []ir.SettingProblem{{Setting: "x"}} }
	body := func(ir.ConnectionSettings) (ir.DriverBody, bool) { return ir.DriverBody{}, false }
	drivers := func(check func(ir.ConnectionSettings) []ir.SettingProblem) Drivers {
		return Drivers{{Name: "a", Check: check, Body: body, Settings: []ir.DriverSetting{{Name: "table", Kind: ir.Text}}}}
	}
	if !sameDrivers(drivers(rules), drivers(rules)) {
		t.Error("copies of the same contracts are not the same drivers")
	}
	if sameDrivers(drivers(rules), drivers(other)) {
		t.Error("contracts with other rules are the same drivers")
	}
	if sameDrivers(drivers(rules), drivers(nil)) {
		t.Error("a contract without rules is the same as one with")
	}
}
