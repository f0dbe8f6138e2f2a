import { createContext, type ComponentChildren } from 'preact';
import { useCallback, useContext, useEffect, useMemo, useState } from 'preact/hooks';
import type { ApiClient, User } from '../api/client';
import { outcome } from '../api/outcome';
import type { Problem } from '../api/problem';
import type { SessionEnd, SessionStore } from './session-store';

/** Why the sign-in screen is shown, beyond "not signed in yet". */
export type SignInReason = SessionEnd | 'revoke-failed' | 'sso-failed';

/**
 * The login code single sign-on ends with (`/app/?login_code=…`, SPEC §23), taken out of the address at once so it
 * stays out of the history, bookmarks and anything shared; null when there is none.
 */
function takeLoginCode(): string | null {
  const url = new URL(window.location.href);
  const code = url.searchParams.get('login_code');
  if (code === null) return null;
  url.searchParams.delete('login_code');
  window.history.replaceState(window.history.state, '', url.pathname + url.search + url.hash);
  return code;
}

export interface Session {
  /** `unreachable`: a saved token could not be checked (server down, offline); retry() checks again */
  state: 'checking' | 'unreachable' | 'signed-out' | 'signed-in';
  /** the signed-in account (GET /users/me), re-read after sign-in and on refreshUser() */
  user: User | null;
  ended: SignInReason | null;
  /** `totpCode`: the second step of an account with two-factor sign-in (after a TOTP_REQUIRED answer) */
  signIn(username: string, password: string, totpCode?: string): Promise<Problem | null>;
  signOut(): Promise<void>;
  refreshUser(): Promise<void>;
  /** why the saved token could not be checked (state `unreachable`) */
  problem: Problem | null;
  retry(): void;
}

const ApiContext = createContext<ApiClient | null>(null);
const TokenContext = createContext<(() => string | null) | null>(null);

/** The bearer token, for what the typed client cannot do: the live event stream's streaming fetch. */
export function useToken(): () => string | null {
  const token = useContext(TokenContext);
  if (!token) throw new Error('useToken outside SessionProvider');
  return token;
}
const SessionContext = createContext<Session | null>(null);

export function useApi(): ApiClient {
  const api = useContext(ApiContext);
  if (!api) throw new Error('useApi outside SessionProvider');
  return api;
}

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside SessionProvider');
  return session;
}

/** The signed-in user, for screens that are only shown signed in. */
export function useUser(): User {
  const { user } = useSession();
  if (!user) throw new Error('useUser while signed out');
  return user;
}

export function SessionProvider({
  api,
  store,
  children,
}: {
  api: ApiClient;
  store: SessionStore;
  children: ComponentChildren;
}) {
  const session = useSessionValue(api, store);
  return (
    <ApiContext.Provider value={api}>
      <TokenContext.Provider value={store.token}>
        <SessionContext.Provider value={session}>{children}</SessionContext.Provider>
      </TokenContext.Provider>
    </ApiContext.Provider>
  );
}

/** A 401 anywhere (client.ts) or a sign-out clears the store; every screen then sees `signed-out`. */
function useSignedOutOnClear(
  store: SessionStore,
  set: {
    setUser: (user: User | null) => void;
    setState: (state: Session['state']) => void;
    setEnded: (why: SignInReason | null) => void;
  },
) {
  useEffect(
    () =>
      store.subscribe((why) => {
        if (why === null) return;
        set.setUser(null);
        set.setState('signed-out');
        set.setEnded(why);
      }),
    [store],
  );
}

function useSessionValue(api: ApiClient, store: SessionStore): Session {
  const [loginCode] = useState(takeLoginCode);
  const [state, setState] = useState<Session['state']>(store.token() || loginCode ? 'checking' : 'signed-out');
  const [user, setUser] = useState<User | null>(null);
  const [ended, setEnded] = useState<SignInReason | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);

  const loadUser = useCallback(async (): Promise<Problem | null> => {
    const me = await outcome(api.GET('/api/v1/users/me'));
    if (!me.ok) return me.problem;
    setUser(me.data);
    setState('signed-in');
    return null;
  }, [api]);

  useSignedOutOnClear(store, { setUser, setState, setEnded });

  // A token saved by this tab (a reload): check it. A 401 ends it (the store hears it from client.ts); no
  // answer at all keeps it, and the app offers to try again rather than signing the user out.
  useEffect(() => {
    if (state !== 'checking') return;
    if (loginCode !== null && !store.token())
      return void finishSingleSignOn(api, store, loginCode, { loadUser, setEnded, setState });
    void loadUser().then((failed) => {
      if (!failed || !store.token()) return;
      if (failed.status === 0 || failed.status >= 500) {
        setProblem(failed);
        setState('unreachable');
      } else {
        store.clear('expired');
      }
    });
  }, [state]);

  return useMemo<Session>(
    () => ({
      state,
      user,
      ended,
      signIn: (username, password, totpCode) =>
        signIn(
          api,
          store,
          { username, password, ...(totpCode ? { totp_code: totpCode } : {}) },
          { loadUser, setEnded },
        ),
      signOut: () => signOut(api, store, setEnded),
      async refreshUser() {
        await loadUser();
      },
      problem,
      retry() {
        setProblem(null);
        setState('checking');
      },
    }),
    [api, store, state, user, ended, problem, loadUser],
  );
}

async function signIn(
  api: ApiClient,
  store: SessionStore,
  credentials: { username: string; password: string; totp_code?: string } | { login_code: string },
  session: { loadUser: () => Promise<Problem | null>; setEnded: (why: SignInReason | null) => void },
): Promise<Problem | null> {
  const issued = await outcome(api.POST('/api/v1/tokens', { body: credentials }));
  if (!issued.ok) return issued.problem;
  store.save(issued.data.accessToken, issued.data.expiresAt);
  session.setEnded(null);
  const problem = await session.loadUser();
  if (problem) store.clear('expired');
  return problem;
}

/** Back from single sign-on: the code buys the token (once, within 60 s); a code that does not says so. */
async function finishSingleSignOn(
  api: ApiClient,
  store: SessionStore,
  loginCode: string,
  session: {
    loadUser: () => Promise<Problem | null>;
    setEnded: (why: SignInReason | null) => void;
    setState: (state: Session['state']) => void;
  },
): Promise<void> {
  const failed = await signIn(api, store, { login_code: loginCode }, session);
  if (!failed) return;
  session.setState('signed-out');
  session.setEnded('sso-failed');
}

async function signOut(
  api: ApiClient,
  store: SessionStore,
  setEnded: (why: SignInReason | null) => void,
): Promise<void> {
  const token = store.token();
  store.clear('signed-out');
  if (!token) return;
  // Revoked on the server (DELETE /tokens/current), so a copied token stops working too.
  const revoked = await outcome(
    api.DELETE('/api/v1/tokens/current', { headers: { authorization: `Bearer ${token}` } }),
  );
  if (!revoked.ok && revoked.problem.status !== 401) setEnded('revoke-failed');
}
