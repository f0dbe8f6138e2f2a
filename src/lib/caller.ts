/** Who is calling, as established by the bearer token (null: anonymous). Role is read fresh from the database. */
export interface Caller {
  userId: number;
  role: 'user' | 'admin';
  status: 'pending' | 'active' | 'suspended';
  jti: string;
  exp: number;
}

export const isAdmin = (caller: Caller | null): boolean => caller?.role === 'admin';
