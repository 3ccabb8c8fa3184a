// @vitest-environment jsdom
// jsdom's globals (its own Uint8Array among them) beside Node's fetch.
import { scriptedServer } from './server';
import { streamsBytesFromAnyRealm } from './realm-scenario';

streamsBytesFromAnyRealm(scriptedServer());
