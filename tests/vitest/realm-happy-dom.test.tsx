// @vitest-environment happy-dom
// happy-dom's globals and its own fetch, Response and streams.
import { scriptedServer } from './server';
import { streamsBytesFromAnyRealm } from './realm-scenario';

streamsBytesFromAnyRealm(scriptedServer());
