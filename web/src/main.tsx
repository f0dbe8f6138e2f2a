import { render } from 'preact';
import { createApiClient } from './api/client';
import { App } from './app/App';
import { SessionProvider } from './session/session';
import { createSessionStore } from './session/session-store';
import './styles.css';

const store = createSessionStore(window.sessionStorage);
const api = createApiClient({ token: store.token, onUnauthenticated: () => store.clear('expired') });

render(
  <SessionProvider api={api} store={store}>
    <App />
  </SessionProvider>,
  document.getElementById('root')!,
);
