import type { User } from '../api/client';
import { useUser } from '../session/session';
import { DateTime } from '../ui/DateTime';
import { TableHead } from '../ui/TableHead';
import { UserActions } from './UserActions';

/** The users, one row each; at phone width the rows become labelled cards (styles.css). */
export function UserTable({ users, onChanged }: { users: User[]; onChanged: (message: string) => void }) {
  const me = useUser();
  return (
    <table class="table users-table">
      <caption class="visually-hidden">Users, newest first</caption>
      <TableHead columns={['Username', 'Email', 'Role', 'Status', 'Created', { label: 'Actions', hidden: true }]} />
      <tbody>
        {users.map((u) => (
          <tr key={u.id}>
            <td data-label="Username">{u.username}</td>
            <td data-label="Email">{u.email}</td>
            <td data-label="Role">{u.role}</td>
            <td data-label="Status">
              <span class={`badge badge-${u.status}`}>{u.status}</span>
            </td>
            <td data-label="Created">
              <DateTime iso={u.createdAt} />
            </td>
            <td class="actions">
              {u.id === me.id ? <span class="muted">You</span> : <UserActions user={u} onChanged={onChanged} />}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
