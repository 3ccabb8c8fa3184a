// The live scenarios (scenarios.mjs) against the real upstream pi-native server, started for this
// file by ../shared/upstream/start.sh and stopped by its PID.
import { defineScenarios } from './scenarios.mjs';

defineScenarios('pi-native');
