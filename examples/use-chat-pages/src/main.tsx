import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import ChatPage from './chat-page';
import ToolsPage from './tools-page';

// Two pages, picked by path (the reference server's `--static` falls back to index.html for
// any path). Each link is a full page load, so every page starts a chat of its own.
const pages = {
  '/': { title: 'Chat', Page: ChatPage },
  '/tools': { title: 'Tools', Page: ToolsPage },
} as const;

type Path = keyof typeof pages;
const path: Path = location.pathname in pages ? (location.pathname as Path) : '/';
const { title, Page } = pages[path];
document.title = `${title} · useChat pages`;

function App() {
  return (
    <>
      <nav>
        {(Object.keys(pages) as Path[]).map((p) => (
          <a key={p} href={p} aria-current={p === path ? 'page' : undefined}>
            {pages[p].title}
          </a>
        ))}
      </nav>
      <main>
        <h1>{title}</h1>
        <Page />
      </main>
    </>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
