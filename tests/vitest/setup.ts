import { cleanup } from '@testing-library/react';
import { afterEach } from 'vitest';

// Unmounts each test's components (their chats stop) before the next test starts.
afterEach(() => cleanup());
