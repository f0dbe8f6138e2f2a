/**
 * Generated from Ferry's served OpenAPI document by `npm run web:api` (web/build/api-types.ts).
 * Do not edit: change the API's schemas and regenerate.
 */

export interface paths {
    "/{code}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Follow a short link (HEAD: the same headers, and no click is recorded)
         * @description A password-protected link takes the password as HTTP Basic credentials (any user name); browsers get a form that posts to POST /{code}.
         */
        get: operations["followShortLink"];
        put?: never;
        /** Follow a password-protected link with its password (the HTML form's target): 303 to the target */
        post: operations["unlockShortLink"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/imports": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Start an import from Shlink, Kutt, YOURLS, Bitly, Dub or a CSV file (admin); a CSV file may be the body (text/csv, ?source=)
         * @description Version 1 of the API only: the unversioned path asked for another version answers 404.
         */
        post: operations["createImport"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/imports/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** An import job: state, progress, counts and the items that were not simply created (admin) */
        get: operations["getImport"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/instance": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** What this instance allows before signing in: sign-up (REGISTRATION), anonymous links, and on a fresh install how to make the first admin */
        get: operations["getInstance"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/links": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Every link, for admins (moderation): anyone's, anonymous, disabled, and expired ones until the sweep removes them
         * @description Sorted and searched as a user's list; `user_id` and `status` narrow it further.
         */
        get: operations["listAllLinks"];
        put?: never;
        /**
         * Shorten a URL (a token makes you its owner)
         * @description Without a credential only while ANONYMOUS_LINKS is true (otherwise 401). A pending account creates nothing: 422 ACCOUNT_NOT_ACTIVE.
         */
        post: operations["createLink"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/links/{code}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A short link: an anonymous one, anyone; an owned one, its owner (or their key with links:read) or an admin
         * @description A link with a password or max_visits shows its target to its owner and admins only, even when it has no owner (any more).
         */
        get: operations["getLink"];
        put?: never;
        post?: never;
        /** Delete a link (owner or admin; an anonymous link: admin only). Its code is never issued again. */
        delete: operations["deleteLink"];
        options?: never;
        head?: never;
        /**
         * Change a link (owner or admin; JSON merge patch). The redirect follows at once here and within a second on every instance
         * @description original_url, expires_at, max_visits, forward_query, tags, password and title may change; short_code may not. If-Match with a stale ETag: 412. Admins may also set disabled (visits then answer 410 LINK_DISABLED) with an optional disabled_reason; anyone else sending another value: 403. A target on a blocked host: 422 DESTINATION_BLOCKED.
         */
        patch: operations["updateLink"];
        trace?: never;
    };
    "/api/v1/links/{code}/clicks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A link's click records, newest first (owner or admin): JSON by cursor, or the whole from/to range as CSV
         * @description With Accept: text/csv the answer streams every record of the range (header row, RFC 4180 quoting; fields starting with = + - @, tab or CR are prefixed with a quote).
         */
        get: operations["listLinkClicks"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/links/{code}/qr": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The short URL as a QR code (whoever may read the link): SVG by default, PNG for Accept: image/png or ?format=png */
        get: operations["getLinkQrCode"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/links/{code}/stats": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A link's click statistics (owner or admin; anyone for an anonymous link)
         * @description Lifetime totals (humans and bots apart) plus a time series and top referrers, user agents, browsers, OS, devices and countries over a window, in a time zone. Computed from rollups: the cost does not grow with the number of clicks.
         */
        get: operations["getLinkStats"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/links/bulk": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Shorten up to 100 URLs at once: one result per item, in order (an Idempotency-Key covers the batch) */
        post: operations["createLinks"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/orders": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Place an order for the caller (idempotent with Idempotency-Key)
         * @description Only an active account may order (otherwise 422 ACCOUNT_NOT_ACTIVE). The order and the stored response for the Idempotency-Key are written in one transaction.
         */
        post: operations["createOrder"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/tokens": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Exchange username and password for a bearer token */
        post: operations["createToken"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/tokens/{jti}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Revoke a token (its owner or an admin) */
        delete: operations["revokeToken"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/tokens/current": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Revoke the token this request carries */
        delete: operations["revokeCurrentToken"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/users": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List users (admin) */
        get: operations["listUsers"];
        put?: never;
        /**
         * Sign up (or, with an admin token, create any user)
         * @description Without an admin token REGISTRATION decides: `approval` (default) makes a pending account that an admin activates, `open` an active one, `closed` refuses with 403 REGISTRATION_CLOSED. GET /api/v1/instance tells which.
         */
        post: operations["createUser"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/users/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A user (themself or an admin) */
        get: operations["getUser"];
        /** Replace a user */
        put: operations["replaceUser"];
        post?: never;
        /** Delete a user, their orders and their tokens (never the last active admin: 409 LAST_ADMIN) */
        delete: operations["deleteUser"];
        options?: never;
        head?: never;
        /** Change some fields of a user (JSON merge patch) */
        patch: operations["updateUser"];
        trace?: never;
    };
    "/api/v1/users/{id}/api-keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A user's API keys, oldest first by default (themself or an admin); never the keys themselves */
        get: operations["listApiKeys"];
        put?: never;
        /** Create an API key for a user (themself or an admin, with a JWT); the key is shown this once */
        post: operations["createApiKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/users/{id}/api-keys/{key_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One of a user's API keys (themself or an admin); never the key itself */
        get: operations["getApiKey"];
        put?: never;
        post?: never;
        /** Revoke an API key (themself or an admin, with a JWT): it is refused at once on every instance */
        delete: operations["revokeApiKey"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/users/{id}/links": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A user's links, oldest first by default (themself or an admin; `me` for the caller), with tag, text and sort */
        get: operations["listUserLinks"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/users/{id}/orders": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A user's orders (themself or an admin) */
        get: operations["listUserOrders"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/users/{id}/orders/{order_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One of a user's orders (themself or an admin) */
        get: operations["getUserOrder"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/users/{id}/stats": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Click statistics over all of a user's links (themself or an admin; `me` for the caller)
         * @description The same figures as a link's statistics, summed over the user's links, plus the links with the most human clicks. Computed from per-user rollups: the cost grows neither with the number of clicks nor with the number of links.
         */
        get: operations["getUserStats"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/users/me": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The caller's own record */
        get: operations["getCurrentUser"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v2/instance": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** What this instance allows before signing in: sign-up (REGISTRATION), anonymous links, and on a fresh install how to make the first admin */
        get: operations["getInstanceV2"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v2/links": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Every link, for admins (moderation): anyone's, anonymous, disabled, and expired ones until the sweep removes them
         * @description Sorted and searched as a user's list; `user_id` and `status` narrow it further.
         */
        get: operations["listAllLinksV2"];
        put?: never;
        /**
         * Shorten a URL (a token makes you its owner)
         * @description Without a credential only while ANONYMOUS_LINKS is true (otherwise 401). A pending account creates nothing: 422 ACCOUNT_NOT_ACTIVE.
         */
        post: operations["createLinkV2"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v2/links/{code}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A short link: an anonymous one, anyone; an owned one, its owner (or their key with links:read) or an admin
         * @description A link with a password or max_visits shows its target to its owner and admins only, even when it has no owner (any more).
         */
        get: operations["getLinkV2"];
        put?: never;
        post?: never;
        /** Delete a link (owner or admin; an anonymous link: admin only). Its code is never issued again. */
        delete: operations["deleteLinkV2"];
        options?: never;
        head?: never;
        /**
         * Change a link (owner or admin; JSON merge patch). The redirect follows at once here and within a second on every instance
         * @description original_url, expires_at, max_visits, forward_query, tags, password and title may change; short_code may not. If-Match with a stale ETag: 412. Admins may also set disabled (visits then answer 410 LINK_DISABLED) with an optional disabled_reason; anyone else sending another value: 403. A target on a blocked host: 422 DESTINATION_BLOCKED.
         */
        patch: operations["updateLinkV2"];
        trace?: never;
    };
    "/api/v2/links/{code}/clicks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A link's click records, newest first (owner or admin): JSON by cursor, or the whole from/to range as CSV
         * @description With Accept: text/csv the answer streams every record of the range (header row, RFC 4180 quoting; fields starting with = + - @, tab or CR are prefixed with a quote).
         */
        get: operations["listLinkClicksV2"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v2/links/{code}/qr": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The short URL as a QR code (whoever may read the link): SVG by default, PNG for Accept: image/png or ?format=png */
        get: operations["getLinkQrCodeV2"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v2/links/{code}/stats": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A link's click statistics (owner or admin; anyone for an anonymous link)
         * @description Lifetime totals (humans and bots apart) plus a time series and top referrers, user agents, browsers, OS, devices and countries over a window, in a time zone. Computed from rollups: the cost does not grow with the number of clicks.
         */
        get: operations["getLinkStatsV2"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v2/links/bulk": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Shorten up to 100 URLs at once: one result per item, in order (an Idempotency-Key covers the batch) */
        post: operations["createLinksV2"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v2/orders": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Place an order for the caller (idempotent with Idempotency-Key)
         * @description Only an active account may order (otherwise 422 ACCOUNT_NOT_ACTIVE). The order and the stored response for the Idempotency-Key are written in one transaction.
         */
        post: operations["createOrderV2"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v2/tokens": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Exchange username and password for a bearer token */
        post: operations["createTokenV2"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v2/tokens/{jti}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Revoke a token (its owner or an admin) */
        delete: operations["revokeTokenV2"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v2/tokens/current": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Revoke the token this request carries */
        delete: operations["revokeCurrentTokenV2"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v2/users": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List users (admin) */
        get: operations["listUsersV2"];
        put?: never;
        /**
         * Sign up (or, with an admin token, create any user)
         * @description Without an admin token REGISTRATION decides: `approval` (default) makes a pending account that an admin activates, `open` an active one, `closed` refuses with 403 REGISTRATION_CLOSED. GET /api/v1/instance tells which.
         */
        post: operations["createUserV2"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v2/users/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A user (themself or an admin) */
        get: operations["getUserV2"];
        /** Replace a user */
        put: operations["replaceUserV2"];
        post?: never;
        /** Delete a user, their orders and their tokens (never the last active admin: 409 LAST_ADMIN) */
        delete: operations["deleteUserV2"];
        options?: never;
        head?: never;
        /** Change some fields of a user (JSON merge patch) */
        patch: operations["updateUserV2"];
        trace?: never;
    };
    "/api/v2/users/{id}/api-keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A user's API keys, oldest first by default (themself or an admin); never the keys themselves */
        get: operations["listApiKeysV2"];
        put?: never;
        /** Create an API key for a user (themself or an admin, with a JWT); the key is shown this once */
        post: operations["createApiKeyV2"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v2/users/{id}/api-keys/{key_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One of a user's API keys (themself or an admin); never the key itself */
        get: operations["getApiKeyV2"];
        put?: never;
        post?: never;
        /** Revoke an API key (themself or an admin, with a JWT): it is refused at once on every instance */
        delete: operations["revokeApiKeyV2"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v2/users/{id}/links": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A user's links, oldest first by default (themself or an admin; `me` for the caller), with tag, text and sort */
        get: operations["listUserLinksV2"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v2/users/{id}/orders": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A user's orders (themself or an admin) */
        get: operations["listUserOrdersV2"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v2/users/{id}/orders/{order_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One of a user's orders (themself or an admin) */
        get: operations["getUserOrderV2"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v2/users/{id}/stats": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Click statistics over all of a user's links (themself or an admin; `me` for the caller)
         * @description The same figures as a link's statistics, summed over the user's links, plus the links with the most human clicks. Computed from per-user rollups: the cost grows neither with the number of clicks nor with the number of links.
         */
        get: operations["getUserStatsV2"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v2/users/me": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The caller's own record */
        get: operations["getCurrentUserV2"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Liveness: the process is up and its event loop turns */
        get: operations["getHealth"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Prometheus metrics (text exposition format 0.0.4) */
        get: operations["getMetrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/readyz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Readiness: the database answers and is fully migrated (and Redis, where used)
         * @description A failing check answers 503 SERVICE_UNAVAILABLE with one `details` item per failing check (`field` names the check).
         */
        get: operations["getReadiness"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /**
         * @example {
         *       "id": 3,
         *       "name": "deploy script",
         *       "prefix": "a1B2c3D4",
         *       "scopes": [
         *         "links:read",
         *         "links:write"
         *       ],
         *       "created_at": "2026-11-21T10:15:30.123Z",
         *       "expires_at": null,
         *       "last_used_at": null
         *     }
         */
        ApiKey: {
            /**
             * Format: date-time
             * @description ISO 8601 UTC, e.g. 2026-11-21T10:15:30.123Z
             */
            created_at: string;
            /** @description null: never expires */
            expires_at: string | null;
            /**
             * Format: int64
             * @description A 64-bit id (at most 2^53-1)
             */
            id: number;
            /** @description The latest use, recorded at most once a minute; null before the first use */
            last_used_at: string | null;
            /** @description 1-64 characters, to tell keys apart */
            name: string;
            /** @description The first 8 characters after `fry_` */
            prefix: string;
            /** @description What the key may do: a non-empty subset of the scopes */
            scopes: ("links:read" | "links:write" | "stats:read" | "orders:read" | "orders:write" | "users:read")[];
        };
        /**
         * @example {
         *       "id": 3,
         *       "name": "deploy script",
         *       "prefix": "a1B2c3D4",
         *       "scopes": [
         *         "links:read",
         *         "links:write"
         *       ],
         *       "created_at": "2026-11-21T10:15:30.123Z",
         *       "expires_at": null,
         *       "last_used_at": null,
         *       "key": "fry_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0"
         *     }
         */
        ApiKeyCreated: {
            /**
             * Format: date-time
             * @description ISO 8601 UTC, e.g. 2026-11-21T10:15:30.123Z
             */
            created_at: string;
            /** @description null: never expires */
            expires_at: string | null;
            /**
             * Format: int64
             * @description A 64-bit id (at most 2^53-1)
             */
            id: number;
            /** @description The key itself, shown this once: send it as `Authorization: Bearer fry_…`. Only a hash of it is kept. */
            key: string;
            /** @description The latest use, recorded at most once a minute; null before the first use */
            last_used_at: string | null;
            /** @description 1-64 characters, to tell keys apart */
            name: string;
            /** @description The first 8 characters after `fry_` */
            prefix: string;
            /** @description What the key may do: a non-empty subset of the scopes */
            scopes: ("links:read" | "links:write" | "stats:read" | "orders:read" | "orders:write" | "users:read")[];
        };
        /**
         * @example {
         *       "id": 3,
         *       "name": "deploy script",
         *       "prefix": "a1B2c3D4",
         *       "scopes": [
         *         "links:read",
         *         "links:write"
         *       ],
         *       "createdAt": "2026-11-21T10:15:30.123Z",
         *       "expiresAt": null,
         *       "lastUsedAt": null,
         *       "key": "fry_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0"
         *     }
         */
        ApiKeyCreatedV2: {
            /**
             * Format: date-time
             * @description ISO 8601 UTC, e.g. 2026-11-21T10:15:30.123Z
             */
            createdAt: string;
            /** @description null: never expires */
            expiresAt: string | null;
            /**
             * Format: int64
             * @description A 64-bit id (at most 2^53-1)
             */
            id: number;
            /** @description The key itself, shown this once: send it as `Authorization: Bearer fry_…`. Only a hash of it is kept. */
            key: string;
            /** @description The latest use, recorded at most once a minute; null before the first use */
            lastUsedAt: string | null;
            /** @description 1-64 characters, to tell keys apart */
            name: string;
            /** @description The first 8 characters after `fry_` */
            prefix: string;
            /** @description What the key may do: a non-empty subset of the scopes */
            scopes: ("links:read" | "links:write" | "stats:read" | "orders:read" | "orders:write" | "users:read")[];
        };
        ApiKeyList: {
            data: components["schemas"]["ApiKey"][];
            pagination: components["schemas"]["Pagination"];
        };
        ApiKeyListV2: {
            data: components["schemas"]["ApiKeyV2"][];
            pagination: components["schemas"]["Pagination"];
        };
        /**
         * @example {
         *       "id": 3,
         *       "name": "deploy script",
         *       "prefix": "a1B2c3D4",
         *       "scopes": [
         *         "links:read",
         *         "links:write"
         *       ],
         *       "createdAt": "2026-11-21T10:15:30.123Z",
         *       "expiresAt": null,
         *       "lastUsedAt": null
         *     }
         */
        ApiKeyV2: {
            /**
             * Format: date-time
             * @description ISO 8601 UTC, e.g. 2026-11-21T10:15:30.123Z
             */
            createdAt: string;
            /** @description null: never expires */
            expiresAt: string | null;
            /**
             * Format: int64
             * @description A 64-bit id (at most 2^53-1)
             */
            id: number;
            /** @description The latest use, recorded at most once a minute; null before the first use */
            lastUsedAt: string | null;
            /** @description 1-64 characters, to tell keys apart */
            name: string;
            /** @description The first 8 characters after `fry_` */
            prefix: string;
            /** @description What the key may do: a non-empty subset of the scopes */
            scopes: ("links:read" | "links:write" | "stats:read" | "orders:read" | "orders:write" | "users:read")[];
        };
        /** @description One visit that was redirected */
        ClickRecord: {
            /** @description Browser family (ua-parser-js); null when not recognised */
            browser: string | null;
            /**
             * Format: date-time
             * @description ISO 8601 UTC, e.g. 2026-11-21T10:15:30.123Z
             */
            clicked_at: string;
            /** @description ISO 3166-1 alpha-2, from a trusted proxy's COUNTRY_HEADER or GEOIP_DATABASE; null when unknown */
            country: string | null;
            /** @description desktop, mobile, tablet, bot or other; null for records older than the analytics */
            device: "desktop" | "mobile" | "tablet" | "bot" | "other" | null;
            /**
             * Format: int64
             * @description A 64-bit id (at most 2^53-1)
             */
            id: number;
            /** @description The client address (TRUST_PROXY-aware) */
            ip: string | null;
            /** @description A bot, crawler, link unfurler or script (isbot), or no User-Agent */
            is_bot: boolean;
            /** @description Operating system (ua-parser-js); null when not recognised */
            os: string | null;
            /** @description As sent, clipped to 2048 characters */
            referrer: string | null;
            /** @description As sent, clipped to 512 characters */
            user_agent: string | null;
        };
        ClickRecordList: {
            data: components["schemas"]["ClickRecord"][];
            pagination: components["schemas"]["Pagination"];
        };
        ClickRecordListV2: {
            data: components["schemas"]["ClickRecordV2"][];
            pagination: components["schemas"]["Pagination"];
        };
        /** @description One visit that was redirected */
        ClickRecordV2: {
            /** @description Browser family (ua-parser-js); null when not recognised */
            browser: string | null;
            /**
             * Format: date-time
             * @description ISO 8601 UTC, e.g. 2026-11-21T10:15:30.123Z
             */
            clickedAt: string;
            /** @description ISO 3166-1 alpha-2, from a trusted proxy's COUNTRY_HEADER or GEOIP_DATABASE; null when unknown */
            country: string | null;
            /** @description desktop, mobile, tablet, bot or other; null for records older than the analytics */
            device: "desktop" | "mobile" | "tablet" | "bot" | "other" | null;
            /**
             * Format: int64
             * @description A 64-bit id (at most 2^53-1)
             */
            id: number;
            /** @description The client address (TRUST_PROXY-aware) */
            ip: string | null;
            /** @description A bot, crawler, link unfurler or script (isbot), or no User-Agent */
            isBot: boolean;
            /** @description Operating system (ua-parser-js); null when not recognised */
            os: string | null;
            /** @description As sent, clipped to 2048 characters */
            referrer: string | null;
            /** @description As sent, clipped to 512 characters */
            userAgent: string | null;
        };
        ErrorDetail: {
            /** @description The body field, query parameter or header, named as the client sent it */
            field: string;
            message: string;
        };
        /**
         * @description The one error shape of every error response
         * @example {
         *       "error": {
         *         "code": "VALIDATION_ERROR",
         *         "message": "Request body is invalid",
         *         "details": [
         *           {
         *             "field": "email",
         *             "message": "must be a valid e-mail address"
         *           }
         *         ]
         *       },
         *       "requestId": "f3a1c9e2-8b1d-4d61-9a39-0c3e5a1b2c4d",
         *       "timestamp": "2026-11-21T10:15:30.123Z"
         *     }
         */
        ErrorEnvelope: {
            error: {
                code: "VALIDATION_ERROR" | "MALFORMED_JSON" | "UNAUTHENTICATED" | "FORBIDDEN" | "INSUFFICIENT_SCOPE" | "NOT_FOUND" | "METHOD_NOT_ALLOWED" | "NOT_ACCEPTABLE" | "CONFLICT" | "VERSION_CONFLICT" | "IDEMPOTENCY_KEY_IN_USE" | "LINK_EXPIRED" | "LINK_EXHAUSTED" | "LINK_PASSWORD_REQUIRED" | "PRECONDITION_FAILED" | "PAYLOAD_TOO_LARGE" | "UNSUPPORTED_MEDIA_TYPE" | "IDEMPOTENCY_KEY_REUSED" | "ACCOUNT_NOT_ACTIVE" | "RATE_LIMITED" | "INTERNAL_ERROR" | "SERVICE_UNAVAILABLE" | "REGISTRATION_CLOSED" | "LINK_DISABLED" | "DESTINATION_BLOCKED" | "LAST_ADMIN" | "STORAGE_UNAVAILABLE" | "REQUEST_TIMEOUT" | "URI_TOO_LONG" | "REQUEST_HEADERS_TOO_LARGE";
                /** @description One item per offending field (at most 100) */
                details: components["schemas"]["ErrorDetail"][];
                message: string;
            };
            requestId: string;
            /** Format: date-time */
            timestamp: string;
        };
        /**
         * @description The process is alive and its event loop answers
         * @example {
         *       "status": "ok"
         *     }
         */
        Health: {
            /** @constant */
            status: "ok";
        };
        /**
         * @example {
         *       "source": "shlink",
         *       "url": "http://10.0.0.5:8080",
         *       "api_key": "e1f…",
         *       "owner": "alice"
         *     }
         */
        ImportCreate: {
            /** @description The source API key (Shlink, Kutt) or bearer token (Bitly); used for this import only, never stored */
            api_key?: string;
            /** @description YOURLS: mysql://user:password@host:port/database */
            database?: string;
            /** @description The source's domain → Ferry's (`default` stands for a default domain). Without it, a source's default domain lands on Ferry's */
            domain_map?: {
                [key: string]: string;
            };
            /** @description Report what would happen; write no link */
            dry_run?: boolean;
            /** @description A code taken in Ferry: skip the item (listed), or stop the import. Default skip */
            on_conflict?: "skip" | "fail";
            /** @description The username that owns the imported links (default: the oldest active admin) */
            owner?: string;
            /** @description Where the links come from */
            source: "shlink" | "kutt" | "yourls" | "bitly" | "dub" | "csv";
            /** @description YOURLS's table prefix (default yourls_) */
            table_prefix?: string;
            /** @description The API of Shlink, Kutt or Bitly (a group: https://api-ssl.bitly.com/v4/groups/{group_guid}); private and loopback addresses are allowed */
            url?: string;
        };
        ImportJob: {
            /**
             * Format: date-time
             * @description ISO 8601 UTC, e.g. 2026-11-21T10:15:30.123Z
             */
            created_at: string;
            dry_run: boolean;
            /** @description Why the import stopped, when it failed */
            error: string | null;
            finished_at: string | null;
            /**
             * Format: int64
             * @description A 64-bit id (at most 2^53-1)
             */
            id: number;
            /** @description Items that were not simply created, or that lost something (at most 1000, in source order) */
            items: {
                /** @description Why, or what could not come over */
                message: string | null;
                outcome: "created" | "unchanged" | "conflict" | "failed" | "would-create";
                /**
                 * Format: int64
                 * @description The item's place in the source, from 1
                 */
                seq: number;
                /** @description Ferry's code of the link */
                short_code: string | null;
                /** @description The item as the source names it: domain/code, or a line of a CSV file */
                source: string;
            }[];
            /** @description A code taken in Ferry: skip the item (listed), or stop the import. Default skip */
            on_conflict: "skip" | "fail";
            owner_id: number | null;
            progress: {
                /**
                 * Format: int64
                 * @description Items whose code is taken in Ferry
                 */
                conflicts: number;
                /**
                 * Format: int64
                 * @description Links created (dry run: that would be)
                 */
                created: number;
                /**
                 * Format: int64
                 * @description Items that cannot become a link
                 */
                failed: number;
                /**
                 * Format: int64
                 * @description Source items read
                 */
                items: number;
                /**
                 * Format: int64
                 * @description Items this source brought before
                 */
                unchanged: number;
                /**
                 * Format: int64
                 * @description Visit records brought over
                 */
                visits: number;
            };
            /** @description Where the links come from */
            source: "shlink" | "kutt" | "yourls" | "bitly" | "dub" | "csv";
            state: "running" | "done" | "failed" | "interrupted";
            /**
             * Format: date-time
             * @description ISO 8601 UTC, e.g. 2026-11-21T10:15:30.123Z
             */
            updated_at: string;
        };
        /**
         * @example {
         *       "registration": "approval",
         *       "anonymous_links": true,
         *       "first_admin_command": null
         *     }
         */
        Instance: {
            /** @description Whether links may be created without a credential (ANONYMOUS_LINKS) */
            anonymous_links: boolean;
            /** @description While no active admin exists and ADMIN_USERNAME is not set: the command to run on the server to create the first admin. null otherwise */
            first_admin_command: "npx ferry admin create" | null;
            /** @description Who may sign up (REGISTRATION): approval (accounts wait for an admin to activate them), open (active at once), closed (only an admin creates accounts) */
            registration: "approval" | "open" | "closed";
        };
        /**
         * @example {
         *       "registration": "approval",
         *       "anonymousLinks": true,
         *       "firstAdminCommand": null
         *     }
         */
        InstanceV2: {
            /** @description Whether links may be created without a credential (ANONYMOUS_LINKS) */
            anonymousLinks: boolean;
            /** @description While no active admin exists and ADMIN_USERNAME is not set: the command to run on the server to create the first admin. null otherwise */
            firstAdminCommand: "npx ferry admin create" | null;
            /** @description Who may sign up (REGISTRATION): approval (accounts wait for an admin to activate them), open (active at once), closed (only an admin creates accounts) */
            registration: "approval" | "open" | "closed";
        };
        /**
         * @example {
         *       "id": 42,
         *       "short_code": "aZ3k9QxB",
         *       "short_url": "http://127.0.0.1:3000/aZ3k9QxB",
         *       "original_url": "https://example.com/a/long/path?x=1",
         *       "user_id": 7,
         *       "expires_at": null,
         *       "created_at": "2026-11-21T10:15:30.123Z",
         *       "updated_at": "2026-11-21T10:15:30.123Z",
         *       "click_count": 0,
         *       "human_clicks": 0,
         *       "bot_clicks": 0,
         *       "max_visits": null,
         *       "forward_query": false,
         *       "tags": [
         *         "spring-campaign"
         *       ],
         *       "has_password": false,
         *       "title": "Spring campaign",
         *       "disabled": false,
         *       "disabled_reason": null
         *     }
         */
        Link: {
            /**
             * Format: int64
             * @description Of click_count, the clicks by bots, crawlers, link unfurlers and scripts (bot_clicks in the stats)
             */
            bot_clicks: number;
            /**
             * Format: int64
             * @description Clicks recorded so far (written in batches, so it may lag a visit by about CLICK_FLUSH_MS)
             */
            click_count: number;
            /**
             * Format: date-time
             * @description ISO 8601 UTC, e.g. 2026-11-21T10:15:30.123Z
             */
            created_at: string;
            /** @description Disabled by an admin (SPEC §18): visits answer 410 LINK_DISABLED until an admin enables it again */
            disabled: boolean;
            /** @description Why an admin disabled the link, for its owner and admins (visitors are not shown it); null: not disabled, or no reason given */
            disabled_reason: string | null;
            /** @description null: never expires */
            expires_at: string | null;
            /** @description Append the visit's query string to the target (utm_* parameters pass through) */
            forward_query: boolean;
            /** @description Read-only: whether visitors need a password */
            has_password: boolean;
            /**
             * Format: int64
             * @description Of click_count, the clicks by people: what the analytics count as clicks (human_clicks in the stats)
             */
            human_clicks: number;
            /**
             * Format: int64
             * @description A 64-bit id (at most 2^53-1)
             */
            id: number;
            /** @description Human GET visits that are redirected; later visits answer 410 LINK_EXHAUSTED. Bots and HEAD do not count. null: no limit */
            max_visits: number | null;
            /** @description The target, exactly as the redirect sends it in Location */
            original_url: string;
            /** @description The short code (case-sensitive) */
            short_code: string;
            /**
             * Format: uri
             * @description Absolute public URL of the short link
             */
            short_url: string;
            /** @description Lower case, in the order given */
            tags: string[];
            /** @description What the link is, for people (at most 200 characters); searched by q. null: none */
            title: string | null;
            /**
             * Format: date-time
             * @description The last change (= created_at until the first)
             */
            updated_at: string;
            /** @description Owner; null for an anonymous link or when the owner was deleted */
            user_id: number | null;
        };
        LinkBulkResult: {
            data: ({
                link: components["schemas"]["Link"];
                /** @constant */
                status: 201;
            } | {
                error: {
                    code: "VALIDATION_ERROR" | "MALFORMED_JSON" | "UNAUTHENTICATED" | "FORBIDDEN" | "INSUFFICIENT_SCOPE" | "NOT_FOUND" | "METHOD_NOT_ALLOWED" | "NOT_ACCEPTABLE" | "CONFLICT" | "VERSION_CONFLICT" | "IDEMPOTENCY_KEY_IN_USE" | "LINK_EXPIRED" | "LINK_EXHAUSTED" | "LINK_PASSWORD_REQUIRED" | "PRECONDITION_FAILED" | "PAYLOAD_TOO_LARGE" | "UNSUPPORTED_MEDIA_TYPE" | "IDEMPOTENCY_KEY_REUSED" | "ACCOUNT_NOT_ACTIVE" | "RATE_LIMITED" | "INTERNAL_ERROR" | "SERVICE_UNAVAILABLE" | "REGISTRATION_CLOSED" | "LINK_DISABLED" | "DESTINATION_BLOCKED" | "LAST_ADMIN" | "STORAGE_UNAVAILABLE" | "REQUEST_TIMEOUT" | "URI_TOO_LONG" | "REQUEST_HEADERS_TOO_LARGE";
                    /** @description One item per offending field (at most 100) */
                    details: components["schemas"]["ErrorDetail"][];
                    message: string;
                };
                /**
                 * Format: int32
                 * @description The status this item alone would have had
                 */
                status: number;
            })[];
        };
        LinkBulkResultV2: {
            data: ({
                link: components["schemas"]["LinkV2"];
                /** @constant */
                status: 201;
            } | {
                error: {
                    code: "VALIDATION_ERROR" | "MALFORMED_JSON" | "UNAUTHENTICATED" | "FORBIDDEN" | "INSUFFICIENT_SCOPE" | "NOT_FOUND" | "METHOD_NOT_ALLOWED" | "NOT_ACCEPTABLE" | "CONFLICT" | "VERSION_CONFLICT" | "IDEMPOTENCY_KEY_IN_USE" | "LINK_EXPIRED" | "LINK_EXHAUSTED" | "LINK_PASSWORD_REQUIRED" | "PRECONDITION_FAILED" | "PAYLOAD_TOO_LARGE" | "UNSUPPORTED_MEDIA_TYPE" | "IDEMPOTENCY_KEY_REUSED" | "ACCOUNT_NOT_ACTIVE" | "RATE_LIMITED" | "INTERNAL_ERROR" | "SERVICE_UNAVAILABLE" | "REGISTRATION_CLOSED" | "LINK_DISABLED" | "DESTINATION_BLOCKED" | "LAST_ADMIN" | "STORAGE_UNAVAILABLE" | "REQUEST_TIMEOUT" | "URI_TOO_LONG" | "REQUEST_HEADERS_TOO_LARGE";
                    /** @description One item per offending field (at most 100) */
                    details: components["schemas"]["ErrorDetail"][];
                    message: string;
                };
                /**
                 * Format: int32
                 * @description The status this item alone would have had
                 */
                status: number;
            })[];
        };
        /**
         * @example {
         *       "original_url": "https://example.com/a/long/path?x=1",
         *       "short_code": "promo26",
         *       "expires_at": "2027-01-01T00:00:00.000Z",
         *       "tags": [
         *         "promo"
         *       ]
         *     }
         */
        LinkCreate: {
            /** @description Read-only; ignored */
            bot_clicks?: unknown;
            /** @description Read-only; ignored */
            click_count?: unknown;
            /** @description Read-only; ignored */
            created_at?: unknown;
            /** @description A future instant; null: never */
            expires_at?: string | null;
            /** @description Append the visit's query string to the target (utm_* parameters pass through) */
            forward_query?: boolean;
            /** @description Read-only; ignored */
            has_password?: unknown;
            /** @description Read-only; ignored */
            human_clicks?: unknown;
            /** @description Read-only; ignored */
            id?: unknown;
            /** @description Human GET visits that are redirected; later visits answer 410 LINK_EXHAUSTED. Bots and HEAD do not count. null: no limit */
            max_visits?: number | null;
            /** @description Absolute http or https URL with a host; no credentials, whitespace or control characters; not a URL of this service. An internationalised URL is stored in its ASCII (punycode / percent-encoded) form. */
            original_url: string;
            /** @description Write-only: visitors must give it (form or HTTP Basic) to be redirected. Stored as a salted scrypt hash. null: no password */
            password?: string | null;
            /** @description A custom code (1-8 of 0-9 a-z A-Z, case-sensitive). Names of top-level paths (api, docs, v3, healthz, ...) are reserved. Omitted: a random 8-character code. */
            short_code?: string;
            /** @description Read-only; ignored */
            short_url?: unknown;
            /** @description At most 10 distinct tags, stored lower case in the order given (duplicates are merged) */
            tags?: string[];
            /** @description What the link is, for people (at most 200 characters); searched by q. null: none */
            title?: string | null;
            /** @description Read-only; ignored */
            updated_at?: unknown;
            /** @description Read-only; ignored */
            user_id?: unknown;
        };
        /**
         * @example {
         *       "originalUrl": "https://example.com/a/long/path?x=1",
         *       "shortCode": "promo26",
         *       "expiresAt": "2027-01-01T00:00:00.000Z",
         *       "tags": [
         *         "promo"
         *       ]
         *     }
         */
        LinkCreateV2: {
            /** @description Read-only; ignored */
            botClicks?: unknown;
            /** @description Read-only; ignored */
            clickCount?: unknown;
            /** @description Read-only; ignored */
            createdAt?: unknown;
            /** @description A future instant; null: never */
            expiresAt?: string | null;
            /** @description Append the visit's query string to the target (utm_* parameters pass through) */
            forwardQuery?: boolean;
            /** @description Read-only; ignored */
            hasPassword?: unknown;
            /** @description Read-only; ignored */
            humanClicks?: unknown;
            /** @description Read-only; ignored */
            id?: unknown;
            /** @description Human GET visits that are redirected; later visits answer 410 LINK_EXHAUSTED. Bots and HEAD do not count. null: no limit */
            maxVisits?: number | null;
            /** @description Absolute http or https URL with a host; no credentials, whitespace or control characters; not a URL of this service. An internationalised URL is stored in its ASCII (punycode / percent-encoded) form. */
            originalUrl: string;
            /** @description Write-only: visitors must give it (form or HTTP Basic) to be redirected. Stored as a salted scrypt hash. null: no password */
            password?: string | null;
            /** @description A custom code (1-8 of 0-9 a-z A-Z, case-sensitive). Names of top-level paths (api, docs, v3, healthz, ...) are reserved. Omitted: a random 8-character code. */
            shortCode?: string;
            /** @description Read-only; ignored */
            shortUrl?: unknown;
            /** @description At most 10 distinct tags, stored lower case in the order given (duplicates are merged) */
            tags?: string[];
            /** @description What the link is, for people (at most 200 characters); searched by q. null: none */
            title?: string | null;
            /** @description Read-only; ignored */
            updatedAt?: unknown;
            /** @description Read-only; ignored */
            userId?: unknown;
        };
        LinkList: {
            data: components["schemas"]["Link"][];
            pagination: components["schemas"]["Pagination"];
        };
        LinkListV2: {
            data: components["schemas"]["LinkV2"][];
            pagination: components["schemas"]["Pagination"];
        };
        /**
         * @example {
         *       "short_code": "aZ3k9QxB",
         *       "click_count": 4,
         *       "total_clicks": 4,
         *       "human_clicks": 3,
         *       "bot_clicks": 1,
         *       "unique_visitors": 2,
         *       "first_click_at": "2026-11-21T10:15:30.123Z",
         *       "last_click_at": "2026-11-22T08:01:02.000Z",
         *       "from": "2026-11-21T00:00:00.000Z",
         *       "to": "2026-11-23T00:00:00.000Z",
         *       "interval": "day",
         *       "tz": "UTC",
         *       "timeseries": [
         *         {
         *           "start": "2026-11-21T00:00:00.000Z",
         *           "clicks": 2,
         *           "bots": 1
         *         },
         *         {
         *           "start": "2026-11-22T00:00:00.000Z",
         *           "clicks": 1,
         *           "bots": 0
         *         }
         *       ],
         *       "top_referrers": [
         *         {
         *           "value": "https://news.example",
         *           "clicks": 2
         *         },
         *         {
         *           "value": "(direct)",
         *           "clicks": 1
         *         }
         *       ],
         *       "top_user_agents": [
         *         {
         *           "value": "Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0",
         *           "clicks": 3
         *         }
         *       ],
         *       "top_browsers": [
         *         {
         *           "value": "Firefox",
         *           "clicks": 3
         *         }
         *       ],
         *       "top_os": [
         *         {
         *           "value": "Linux",
         *           "clicks": 3
         *         }
         *       ],
         *       "top_devices": [
         *         {
         *           "value": "desktop",
         *           "clicks": 3
         *         }
         *       ],
         *       "top_countries": [
         *         {
         *           "value": "DE",
         *           "clicks": 2
         *         },
         *         {
         *           "value": "(unknown)",
         *           "clicks": 1
         *         }
         *       ],
         *       "data_fresh_as_of": "2026-11-22T08:01:03.000Z"
         *     }
         */
        LinkStats: {
            /**
             * Format: int64
             * @description Lifetime: clicks by bots, crawlers, link unfurlers and scripts (isbot), and visits without a User-Agent
             */
            bot_clicks: number;
            /**
             * Format: int64
             * @description Lifetime: the link's counter (as in the link record)
             */
            click_count: number;
            /** @description Clicks made up to this time are counted: the click writer's last completed flush. Later clicks may still be on their way (CLICK_FLUSH_MS). Null when no writer has flushed yet */
            data_fresh_as_of: string | null;
            /** @description Lifetime; null before the first click */
            first_click_at: string | null;
            /**
             * Format: date-time
             * @description Start of the window the time series and top lists cover (a bucket boundary)
             */
            from: string;
            /**
             * Format: int64
             * @description Lifetime: clicks by people (not recognised as a bot, crawler or unfurler)
             */
            human_clicks: number;
            interval: "hour" | "day";
            /** @description Lifetime; null before the first click */
            last_click_at: string | null;
            short_code: string;
            /** @description One entry per bucket of the window, oldest first; buckets without clicks have 0. A day bucket starts at midnight in `tz` (23 or 25 hours long across a daylight-saving change) */
            timeseries: {
                /**
                 * Format: int64
                 * @description Bot clicks in the bucket
                 */
                bots: number;
                /**
                 * Format: int64
                 * @description Human clicks in the bucket
                 */
                clicks: number;
                /**
                 * Format: date-time
                 * @description ISO 8601 UTC, e.g. 2026-11-21T10:15:30.123Z
                 */
                start: string;
            }[];
            /**
             * Format: date-time
             * @description End of that window, exclusive (a bucket boundary)
             */
            to: string;
            /** @description Human visits only, over the whole UTC days of the window, most clicks first (ties by value), at most 10. At most 100 distinct values are kept per link, day and kind; later new ones count as "(other)". */
            top_browsers: {
                /**
                 * Format: int64
                 * @description Clicks
                 */
                clicks: number;
                /** @description A browser family (ua-parser-js), e.g. Chrome, Firefox, Mobile Safari; "(unknown)" when not recognised */
                value: string;
            }[];
            /** @description Human visits only, over the whole UTC days of the window, most clicks first (ties by value), at most 10. At most 100 distinct values are kept per link, day and kind; later new ones count as "(other)". */
            top_countries: {
                /**
                 * Format: int64
                 * @description Clicks
                 */
                clicks: number;
                /** @description An ISO 3166-1 alpha-2 country code, or "(unknown)" */
                value: string;
            }[];
            /** @description Human visits only, over the whole UTC days of the window, most clicks first (ties by value), at most 10. At most 100 distinct values are kept per link, day and kind; later new ones count as "(other)". */
            top_devices: {
                /**
                 * Format: int64
                 * @description Clicks
                 */
                clicks: number;
                /** @description desktop, mobile, tablet or other */
                value: string;
            }[];
            /** @description Human visits only, over the whole UTC days of the window, most clicks first (ties by value), at most 10. At most 100 distinct values are kept per link, day and kind; later new ones count as "(other)". */
            top_os: {
                /**
                 * Format: int64
                 * @description Clicks
                 */
                clicks: number;
                /** @description An operating system (ua-parser-js), e.g. Windows, Mac OS, iOS, Android; "(unknown)" when not recognised */
                value: string;
            }[];
            /** @description Human visits only, over the whole UTC days of the window, most clicks first (ties by value), at most 10. At most 100 distinct values are kept per link, day and kind; later new ones count as "(other)". Visits without a Referer count as "(direct)". */
            top_referrers: {
                /**
                 * Format: int64
                 * @description Clicks
                 */
                clicks: number;
                /** @description A referrer origin, or (direct) for visits that sent none */
                value: string;
            }[];
            /** @description Human visits only, over the whole UTC days of the window, most clicks first (ties by value), at most 10. At most 100 distinct values are kept per link, day and kind; later new ones count as "(other)". */
            top_user_agents: {
                /**
                 * Format: int64
                 * @description Clicks
                 */
                clicks: number;
                /** @description A User-Agent header as sent (clipped at 255 characters) */
                value: string;
            }[];
            /**
             * Format: int64
             * @description Lifetime: every click record written so far (human_clicks + bot_clicks)
             */
            total_clicks: number;
            /** @description The time zone the day buckets follow */
            tz: string;
            /**
             * Format: int64
             * @description Lifetime: distinct human visitors (by client address; with IP_ANONYMIZE, by a salted hash of the address that changes every UTC day)
             */
            unique_visitors: number;
        };
        /**
         * @example {
         *       "shortCode": "aZ3k9QxB",
         *       "clickCount": 4,
         *       "totalClicks": 4,
         *       "humanClicks": 3,
         *       "botClicks": 1,
         *       "uniqueVisitors": 2,
         *       "firstClickAt": "2026-11-21T10:15:30.123Z",
         *       "lastClickAt": "2026-11-22T08:01:02.000Z",
         *       "from": "2026-11-21T00:00:00.000Z",
         *       "to": "2026-11-23T00:00:00.000Z",
         *       "interval": "day",
         *       "tz": "UTC",
         *       "timeseries": [
         *         {
         *           "start": "2026-11-21T00:00:00.000Z",
         *           "clicks": 2,
         *           "bots": 1
         *         },
         *         {
         *           "start": "2026-11-22T00:00:00.000Z",
         *           "clicks": 1,
         *           "bots": 0
         *         }
         *       ],
         *       "topReferrers": [
         *         {
         *           "value": "https://news.example",
         *           "clicks": 2
         *         },
         *         {
         *           "value": "(direct)",
         *           "clicks": 1
         *         }
         *       ],
         *       "topUserAgents": [
         *         {
         *           "value": "Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0",
         *           "clicks": 3
         *         }
         *       ],
         *       "topBrowsers": [
         *         {
         *           "value": "Firefox",
         *           "clicks": 3
         *         }
         *       ],
         *       "topOs": [
         *         {
         *           "value": "Linux",
         *           "clicks": 3
         *         }
         *       ],
         *       "topDevices": [
         *         {
         *           "value": "desktop",
         *           "clicks": 3
         *         }
         *       ],
         *       "topCountries": [
         *         {
         *           "value": "DE",
         *           "clicks": 2
         *         },
         *         {
         *           "value": "(unknown)",
         *           "clicks": 1
         *         }
         *       ],
         *       "dataFreshAsOf": "2026-11-22T08:01:03.000Z"
         *     }
         */
        LinkStatsV2: {
            /**
             * Format: int64
             * @description Lifetime: clicks by bots, crawlers, link unfurlers and scripts (isbot), and visits without a User-Agent
             */
            botClicks: number;
            /**
             * Format: int64
             * @description Lifetime: the link's counter (as in the link record)
             */
            clickCount: number;
            /** @description Clicks made up to this time are counted: the click writer's last completed flush. Later clicks may still be on their way (CLICK_FLUSH_MS). Null when no writer has flushed yet */
            dataFreshAsOf: string | null;
            /** @description Lifetime; null before the first click */
            firstClickAt: string | null;
            /**
             * Format: date-time
             * @description Start of the window the time series and top lists cover (a bucket boundary)
             */
            from: string;
            /**
             * Format: int64
             * @description Lifetime: clicks by people (not recognised as a bot, crawler or unfurler)
             */
            humanClicks: number;
            interval: "hour" | "day";
            /** @description Lifetime; null before the first click */
            lastClickAt: string | null;
            shortCode: string;
            /** @description One entry per bucket of the window, oldest first; buckets without clicks have 0. A day bucket starts at midnight in `tz` (23 or 25 hours long across a daylight-saving change) */
            timeseries: {
                /**
                 * Format: int64
                 * @description Bot clicks in the bucket
                 */
                bots: number;
                /**
                 * Format: int64
                 * @description Human clicks in the bucket
                 */
                clicks: number;
                /**
                 * Format: date-time
                 * @description ISO 8601 UTC, e.g. 2026-11-21T10:15:30.123Z
                 */
                start: string;
            }[];
            /**
             * Format: date-time
             * @description End of that window, exclusive (a bucket boundary)
             */
            to: string;
            /** @description Human visits only, over the whole UTC days of the window, most clicks first (ties by value), at most 10. At most 100 distinct values are kept per link, day and kind; later new ones count as "(other)". */
            topBrowsers: {
                /**
                 * Format: int64
                 * @description Clicks
                 */
                clicks: number;
                /** @description A browser family (ua-parser-js), e.g. Chrome, Firefox, Mobile Safari; "(unknown)" when not recognised */
                value: string;
            }[];
            /** @description Human visits only, over the whole UTC days of the window, most clicks first (ties by value), at most 10. At most 100 distinct values are kept per link, day and kind; later new ones count as "(other)". */
            topCountries: {
                /**
                 * Format: int64
                 * @description Clicks
                 */
                clicks: number;
                /** @description An ISO 3166-1 alpha-2 country code, or "(unknown)" */
                value: string;
            }[];
            /** @description Human visits only, over the whole UTC days of the window, most clicks first (ties by value), at most 10. At most 100 distinct values are kept per link, day and kind; later new ones count as "(other)". */
            topDevices: {
                /**
                 * Format: int64
                 * @description Clicks
                 */
                clicks: number;
                /** @description desktop, mobile, tablet or other */
                value: string;
            }[];
            /** @description Human visits only, over the whole UTC days of the window, most clicks first (ties by value), at most 10. At most 100 distinct values are kept per link, day and kind; later new ones count as "(other)". */
            topOs: {
                /**
                 * Format: int64
                 * @description Clicks
                 */
                clicks: number;
                /** @description An operating system (ua-parser-js), e.g. Windows, Mac OS, iOS, Android; "(unknown)" when not recognised */
                value: string;
            }[];
            /** @description Human visits only, over the whole UTC days of the window, most clicks first (ties by value), at most 10. At most 100 distinct values are kept per link, day and kind; later new ones count as "(other)". Visits without a Referer count as "(direct)". */
            topReferrers: {
                /**
                 * Format: int64
                 * @description Clicks
                 */
                clicks: number;
                /** @description A referrer origin, or (direct) for visits that sent none */
                value: string;
            }[];
            /** @description Human visits only, over the whole UTC days of the window, most clicks first (ties by value), at most 10. At most 100 distinct values are kept per link, day and kind; later new ones count as "(other)". */
            topUserAgents: {
                /**
                 * Format: int64
                 * @description Clicks
                 */
                clicks: number;
                /** @description A User-Agent header as sent (clipped at 255 characters) */
                value: string;
            }[];
            /**
             * Format: int64
             * @description Lifetime: every click record written so far (human_clicks + bot_clicks)
             */
            totalClicks: number;
            /** @description The time zone the day buckets follow */
            tz: string;
            /**
             * Format: int64
             * @description Lifetime: distinct human visitors (by client address; with IP_ANONYMIZE, by a salted hash of the address that changes every UTC day)
             */
            uniqueVisitors: number;
        };
        /**
         * @example {
         *       "id": 42,
         *       "shortCode": "aZ3k9QxB",
         *       "shortUrl": "http://127.0.0.1:3000/aZ3k9QxB",
         *       "originalUrl": "https://example.com/a/long/path?x=1",
         *       "userId": 7,
         *       "expiresAt": null,
         *       "createdAt": "2026-11-21T10:15:30.123Z",
         *       "updatedAt": "2026-11-21T10:15:30.123Z",
         *       "clickCount": 0,
         *       "humanClicks": 0,
         *       "botClicks": 0,
         *       "maxVisits": null,
         *       "forwardQuery": false,
         *       "tags": [
         *         "spring-campaign"
         *       ],
         *       "hasPassword": false,
         *       "title": "Spring campaign",
         *       "disabled": false,
         *       "disabledReason": null
         *     }
         */
        LinkV2: {
            /**
             * Format: int64
             * @description Of click_count, the clicks by bots, crawlers, link unfurlers and scripts (bot_clicks in the stats)
             */
            botClicks: number;
            /**
             * Format: int64
             * @description Clicks recorded so far (written in batches, so it may lag a visit by about CLICK_FLUSH_MS)
             */
            clickCount: number;
            /**
             * Format: date-time
             * @description ISO 8601 UTC, e.g. 2026-11-21T10:15:30.123Z
             */
            createdAt: string;
            /** @description Disabled by an admin (SPEC §18): visits answer 410 LINK_DISABLED until an admin enables it again */
            disabled: boolean;
            /** @description Why an admin disabled the link, for its owner and admins (visitors are not shown it); null: not disabled, or no reason given */
            disabledReason: string | null;
            /** @description null: never expires */
            expiresAt: string | null;
            /** @description Append the visit's query string to the target (utm_* parameters pass through) */
            forwardQuery: boolean;
            /** @description Read-only: whether visitors need a password */
            hasPassword: boolean;
            /**
             * Format: int64
             * @description Of click_count, the clicks by people: what the analytics count as clicks (human_clicks in the stats)
             */
            humanClicks: number;
            /**
             * Format: int64
             * @description A 64-bit id (at most 2^53-1)
             */
            id: number;
            /** @description Human GET visits that are redirected; later visits answer 410 LINK_EXHAUSTED. Bots and HEAD do not count. null: no limit */
            maxVisits: number | null;
            /** @description The target, exactly as the redirect sends it in Location */
            originalUrl: string;
            /** @description The short code (case-sensitive) */
            shortCode: string;
            /**
             * Format: uri
             * @description Absolute public URL of the short link
             */
            shortUrl: string;
            /** @description Lower case, in the order given */
            tags: string[];
            /** @description What the link is, for people (at most 200 characters); searched by q. null: none */
            title: string | null;
            /**
             * Format: date-time
             * @description The last change (= created_at until the first)
             */
            updatedAt: string;
            /** @description Owner; null for an anonymous link or when the owner was deleted */
            userId: number | null;
        };
        /**
         * @example {
         *       "id": 17,
         *       "userId": 1,
         *       "itemId": 42,
         *       "quantity": 3,
         *       "createdAt": "2026-11-21T10:15:30.123Z"
         *     }
         */
        Order: {
            /**
             * Format: date-time
             * @description ISO 8601 UTC, e.g. 2026-11-21T10:15:30.123Z
             */
            createdAt: string;
            /**
             * Format: int64
             * @description A 64-bit id (at most 2^53-1)
             */
            id: number;
            /**
             * Format: int64
             * @description The ordered item (an integer >= 1)
             */
            itemId: number;
            /**
             * Format: int32
             * @description 1-1000
             */
            quantity: number;
            /**
             * Format: int64
             * @description The user who placed the order
             */
            userId: number;
        };
        OrderList: {
            data: components["schemas"]["Order"][];
            pagination: components["schemas"]["Pagination"];
        };
        /** @description Page mode carries page, limit, total, totalPages and nextCursor; cursor mode carries limit and nextCursor (null at the end). */
        Pagination: {
            /** Format: int32 */
            limit: number;
            nextCursor: string | null;
            /** Format: int32 */
            page?: number;
            /** Format: int64 */
            total?: number;
            /** Format: int64 */
            totalPages?: number;
        };
        /**
         * @description Every dependency answered. A failing check answers 503 with one detail per failing check instead.
         * @example {
         *       "status": "ok",
         *       "checks": {
         *         "database": "ok",
         *         "storage": "ok"
         *       }
         *     }
         * @example {
         *       "status": "ok",
         *       "checks": {
         *         "database": "ok",
         *         "storage": "ok",
         *         "redis": "ok"
         *       },
         *       "click_stream": {
         *         "backlog": 12,
         *         "consumers": 2
         *       }
         *     }
         */
        Readiness: {
            /** @description Every dependency checked, by name: database, storage (writes can land: DATA_DIR has room and takes writes on the embedded engine, and no write failed for lack of space in the last 10 s), redis when used */
            checks: {
                [key: string]: "ok";
            };
            /** @description The scale-out setup (REDIS_URL) only: how far click counting is behind, and who counts */
            click_stream?: {
                /**
                 * Format: int64
                 * @description Clicks in the Redis click stream not yet written (all instances)
                 */
                backlog: number;
                /**
                 * Format: int32
                 * @description Consumers of the click stream seen alive in the last 30 s (API instances and `npm run worker`)
                 */
                consumers: number;
            };
            /** @constant */
            status: "ok";
        };
        /**
         * @example {
         *       "accessToken": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.e30.c2lnbmF0dXJl",
         *       "tokenType": "Bearer",
         *       "expiresIn": 3600,
         *       "expiresAt": "2026-11-21T11:15:30.000Z"
         *     }
         */
        Token: {
            /** @description An HS256 JWT; send it as `Authorization: Bearer <token>` */
            accessToken: string;
            /** Format: date-time */
            expiresAt: string;
            /**
             * Format: int32
             * @description Seconds until the token expires (TOKEN_TTL_SECONDS)
             */
            expiresIn: number;
            /** @constant */
            tokenType: "Bearer";
        };
        /**
         * @example {
         *       "id": 1,
         *       "username": "ada",
         *       "email": "ada@example.com",
         *       "role": "user",
         *       "status": "pending",
         *       "name": "Ada Lovelace",
         *       "age": 36,
         *       "version": 1,
         *       "createdAt": "2026-11-21T10:15:30.123Z",
         *       "updatedAt": "2026-11-21T10:15:30.123Z"
         *     }
         */
        User: {
            age: number | null;
            /**
             * Format: date-time
             * @description ISO 8601 UTC, e.g. 2026-11-21T10:15:30.123Z
             */
            createdAt: string;
            /**
             * Format: email
             * @description Unique ignoring case
             */
            email: string;
            /**
             * Format: int64
             * @description A 64-bit id (at most 2^53-1)
             */
            id: number;
            name: string | null;
            /** @description Only an admin may set or change it */
            role: "user" | "admin";
            /** @description A new user is pending; only an admin may change it */
            status: "pending" | "active" | "suspended";
            /**
             * Format: date-time
             * @description ISO 8601 UTC, e.g. 2026-11-21T10:15:30.123Z
             */
            updatedAt: string;
            /** @description 3-32 of A-Z a-z 0-9 . _ -, unique ignoring case */
            username: string;
            /**
             * Format: int64
             * @description Increases by one on every change
             */
            version: number;
        };
        UserList: {
            data: components["schemas"]["User"][];
            pagination: components["schemas"]["Pagination"];
        };
        /**
         * @description Statistics over all of a user's links: the same figures as a link's, summed, plus the top links
         * @example {
         *       "user_id": 42,
         *       "links": 2,
         *       "total_clicks": 4,
         *       "human_clicks": 3,
         *       "bot_clicks": 1,
         *       "unique_visitors": 2,
         *       "first_click_at": "2026-11-21T10:15:30.123Z",
         *       "last_click_at": "2026-11-22T08:01:02.000Z",
         *       "from": "2026-11-21T00:00:00.000Z",
         *       "to": "2026-11-23T00:00:00.000Z",
         *       "interval": "day",
         *       "tz": "UTC",
         *       "timeseries": [
         *         {
         *           "start": "2026-11-21T00:00:00.000Z",
         *           "clicks": 2,
         *           "bots": 1
         *         },
         *         {
         *           "start": "2026-11-22T00:00:00.000Z",
         *           "clicks": 1,
         *           "bots": 0
         *         }
         *       ],
         *       "top_referrers": [
         *         {
         *           "value": "https://news.example",
         *           "clicks": 2
         *         },
         *         {
         *           "value": "(direct)",
         *           "clicks": 1
         *         }
         *       ],
         *       "top_user_agents": [
         *         {
         *           "value": "Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0",
         *           "clicks": 3
         *         }
         *       ],
         *       "top_browsers": [
         *         {
         *           "value": "Firefox",
         *           "clicks": 3
         *         }
         *       ],
         *       "top_os": [
         *         {
         *           "value": "Linux",
         *           "clicks": 3
         *         }
         *       ],
         *       "top_devices": [
         *         {
         *           "value": "desktop",
         *           "clicks": 3
         *         }
         *       ],
         *       "top_countries": [
         *         {
         *           "value": "DE",
         *           "clicks": 2
         *         },
         *         {
         *           "value": "(unknown)",
         *           "clicks": 1
         *         }
         *       ],
         *       "data_fresh_as_of": "2026-11-22T08:01:03.000Z",
         *       "top_links": [
         *         {
         *           "short_code": "aZ3k9QxB",
         *           "clicks": 3
         *         }
         *       ]
         *     }
         */
        UserStats: {
            /**
             * Format: int64
             * @description Lifetime: clicks by bots on the user's links, those deleted or expired since included
             */
            bot_clicks: number;
            /** @description Clicks made up to this time are counted: the click writer's last completed flush. Later clicks may still be on their way (CLICK_FLUSH_MS). Null when no writer has flushed yet */
            data_fresh_as_of: string | null;
            /** @description Lifetime; null before the first click */
            first_click_at: string | null;
            /**
             * Format: date-time
             * @description Start of the window the time series and top lists cover (a bucket boundary)
             */
            from: string;
            /**
             * Format: int64
             * @description Lifetime: clicks by people on the user's links, those deleted or expired since included
             */
            human_clicks: number;
            interval: "hour" | "day";
            /** @description Lifetime; null before the first click */
            last_click_at: string | null;
            /**
             * Format: int64
             * @description The user's links (that exist now)
             */
            links: number;
            /** @description One entry per bucket of the window, oldest first; buckets without clicks have 0. A day bucket starts at midnight in `tz` (23 or 25 hours long across a daylight-saving change) */
            timeseries: {
                /**
                 * Format: int64
                 * @description Bot clicks in the bucket
                 */
                bots: number;
                /**
                 * Format: int64
                 * @description Human clicks in the bucket
                 */
                clicks: number;
                /**
                 * Format: date-time
                 * @description ISO 8601 UTC, e.g. 2026-11-21T10:15:30.123Z
                 */
                start: string;
            }[];
            /**
             * Format: date-time
             * @description End of that window, exclusive (a bucket boundary)
             */
            to: string;
            /** @description Human visits only, over the whole UTC days of the window, most clicks first (ties by value), at most 10. At most 100 distinct values are kept per link, day and kind; later new ones count as "(other)". */
            top_browsers: {
                /**
                 * Format: int64
                 * @description Clicks
                 */
                clicks: number;
                /** @description A browser family (ua-parser-js), e.g. Chrome, Firefox, Mobile Safari; "(unknown)" when not recognised */
                value: string;
            }[];
            /** @description Human visits only, over the whole UTC days of the window, most clicks first (ties by value), at most 10. At most 100 distinct values are kept per link, day and kind; later new ones count as "(other)". */
            top_countries: {
                /**
                 * Format: int64
                 * @description Clicks
                 */
                clicks: number;
                /** @description An ISO 3166-1 alpha-2 country code, or "(unknown)" */
                value: string;
            }[];
            /** @description Human visits only, over the whole UTC days of the window, most clicks first (ties by value), at most 10. At most 100 distinct values are kept per link, day and kind; later new ones count as "(other)". */
            top_devices: {
                /**
                 * Format: int64
                 * @description Clicks
                 */
                clicks: number;
                /** @description desktop, mobile, tablet or other */
                value: string;
            }[];
            /** @description The user's links with the most human clicks over the whole UTC days of the window, most first (ties by code), at most 10. At most 100 links are kept per user and day, the first ones clicked that day. */
            top_links: {
                /**
                 * Format: int64
                 * @description Human clicks in the window
                 */
                clicks: number;
                short_code: string;
            }[];
            /** @description Human visits only, over the whole UTC days of the window, most clicks first (ties by value), at most 10. At most 100 distinct values are kept per link, day and kind; later new ones count as "(other)". */
            top_os: {
                /**
                 * Format: int64
                 * @description Clicks
                 */
                clicks: number;
                /** @description An operating system (ua-parser-js), e.g. Windows, Mac OS, iOS, Android; "(unknown)" when not recognised */
                value: string;
            }[];
            /** @description Human visits only, over the whole UTC days of the window, most clicks first (ties by value), at most 10. At most 100 distinct values are kept per link, day and kind; later new ones count as "(other)". Visits without a Referer count as "(direct)". */
            top_referrers: {
                /**
                 * Format: int64
                 * @description Clicks
                 */
                clicks: number;
                /** @description A referrer origin, or (direct) for visits that sent none */
                value: string;
            }[];
            /** @description Human visits only, over the whole UTC days of the window, most clicks first (ties by value), at most 10. At most 100 distinct values are kept per link, day and kind; later new ones count as "(other)". */
            top_user_agents: {
                /**
                 * Format: int64
                 * @description Clicks
                 */
                clicks: number;
                /** @description A User-Agent header as sent (clipped at 255 characters) */
                value: string;
            }[];
            /**
             * Format: int64
             * @description Lifetime: every click on the user's links, those deleted or expired since included (human_clicks + bot_clicks)
             */
            total_clicks: number;
            /** @description The time zone the day buckets follow */
            tz: string;
            /**
             * Format: int64
             * @description Lifetime: each existing link's distinct human visitors, added up (someone who visited two of the user's links counts twice)
             */
            unique_visitors: number;
            /**
             * Format: int64
             * @description Whose links these statistics cover
             */
            user_id: number;
        };
        /**
         * @description Statistics over all of a user's links: the same figures as a link's, summed, plus the top links
         * @example {
         *       "userId": 42,
         *       "links": 2,
         *       "totalClicks": 4,
         *       "humanClicks": 3,
         *       "botClicks": 1,
         *       "uniqueVisitors": 2,
         *       "firstClickAt": "2026-11-21T10:15:30.123Z",
         *       "lastClickAt": "2026-11-22T08:01:02.000Z",
         *       "from": "2026-11-21T00:00:00.000Z",
         *       "to": "2026-11-23T00:00:00.000Z",
         *       "interval": "day",
         *       "tz": "UTC",
         *       "timeseries": [
         *         {
         *           "start": "2026-11-21T00:00:00.000Z",
         *           "clicks": 2,
         *           "bots": 1
         *         },
         *         {
         *           "start": "2026-11-22T00:00:00.000Z",
         *           "clicks": 1,
         *           "bots": 0
         *         }
         *       ],
         *       "topReferrers": [
         *         {
         *           "value": "https://news.example",
         *           "clicks": 2
         *         },
         *         {
         *           "value": "(direct)",
         *           "clicks": 1
         *         }
         *       ],
         *       "topUserAgents": [
         *         {
         *           "value": "Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0",
         *           "clicks": 3
         *         }
         *       ],
         *       "topBrowsers": [
         *         {
         *           "value": "Firefox",
         *           "clicks": 3
         *         }
         *       ],
         *       "topOs": [
         *         {
         *           "value": "Linux",
         *           "clicks": 3
         *         }
         *       ],
         *       "topDevices": [
         *         {
         *           "value": "desktop",
         *           "clicks": 3
         *         }
         *       ],
         *       "topCountries": [
         *         {
         *           "value": "DE",
         *           "clicks": 2
         *         },
         *         {
         *           "value": "(unknown)",
         *           "clicks": 1
         *         }
         *       ],
         *       "dataFreshAsOf": "2026-11-22T08:01:03.000Z",
         *       "topLinks": [
         *         {
         *           "shortCode": "aZ3k9QxB",
         *           "clicks": 3
         *         }
         *       ]
         *     }
         */
        UserStatsV2: {
            /**
             * Format: int64
             * @description Lifetime: clicks by bots on the user's links, those deleted or expired since included
             */
            botClicks: number;
            /** @description Clicks made up to this time are counted: the click writer's last completed flush. Later clicks may still be on their way (CLICK_FLUSH_MS). Null when no writer has flushed yet */
            dataFreshAsOf: string | null;
            /** @description Lifetime; null before the first click */
            firstClickAt: string | null;
            /**
             * Format: date-time
             * @description Start of the window the time series and top lists cover (a bucket boundary)
             */
            from: string;
            /**
             * Format: int64
             * @description Lifetime: clicks by people on the user's links, those deleted or expired since included
             */
            humanClicks: number;
            interval: "hour" | "day";
            /** @description Lifetime; null before the first click */
            lastClickAt: string | null;
            /**
             * Format: int64
             * @description The user's links (that exist now)
             */
            links: number;
            /** @description One entry per bucket of the window, oldest first; buckets without clicks have 0. A day bucket starts at midnight in `tz` (23 or 25 hours long across a daylight-saving change) */
            timeseries: {
                /**
                 * Format: int64
                 * @description Bot clicks in the bucket
                 */
                bots: number;
                /**
                 * Format: int64
                 * @description Human clicks in the bucket
                 */
                clicks: number;
                /**
                 * Format: date-time
                 * @description ISO 8601 UTC, e.g. 2026-11-21T10:15:30.123Z
                 */
                start: string;
            }[];
            /**
             * Format: date-time
             * @description End of that window, exclusive (a bucket boundary)
             */
            to: string;
            /** @description Human visits only, over the whole UTC days of the window, most clicks first (ties by value), at most 10. At most 100 distinct values are kept per link, day and kind; later new ones count as "(other)". */
            topBrowsers: {
                /**
                 * Format: int64
                 * @description Clicks
                 */
                clicks: number;
                /** @description A browser family (ua-parser-js), e.g. Chrome, Firefox, Mobile Safari; "(unknown)" when not recognised */
                value: string;
            }[];
            /** @description Human visits only, over the whole UTC days of the window, most clicks first (ties by value), at most 10. At most 100 distinct values are kept per link, day and kind; later new ones count as "(other)". */
            topCountries: {
                /**
                 * Format: int64
                 * @description Clicks
                 */
                clicks: number;
                /** @description An ISO 3166-1 alpha-2 country code, or "(unknown)" */
                value: string;
            }[];
            /** @description Human visits only, over the whole UTC days of the window, most clicks first (ties by value), at most 10. At most 100 distinct values are kept per link, day and kind; later new ones count as "(other)". */
            topDevices: {
                /**
                 * Format: int64
                 * @description Clicks
                 */
                clicks: number;
                /** @description desktop, mobile, tablet or other */
                value: string;
            }[];
            /** @description The user's links with the most human clicks over the whole UTC days of the window, most first (ties by code), at most 10. At most 100 links are kept per user and day, the first ones clicked that day. */
            topLinks: {
                /**
                 * Format: int64
                 * @description Human clicks in the window
                 */
                clicks: number;
                shortCode: string;
            }[];
            /** @description Human visits only, over the whole UTC days of the window, most clicks first (ties by value), at most 10. At most 100 distinct values are kept per link, day and kind; later new ones count as "(other)". */
            topOs: {
                /**
                 * Format: int64
                 * @description Clicks
                 */
                clicks: number;
                /** @description An operating system (ua-parser-js), e.g. Windows, Mac OS, iOS, Android; "(unknown)" when not recognised */
                value: string;
            }[];
            /** @description Human visits only, over the whole UTC days of the window, most clicks first (ties by value), at most 10. At most 100 distinct values are kept per link, day and kind; later new ones count as "(other)". Visits without a Referer count as "(direct)". */
            topReferrers: {
                /**
                 * Format: int64
                 * @description Clicks
                 */
                clicks: number;
                /** @description A referrer origin, or (direct) for visits that sent none */
                value: string;
            }[];
            /** @description Human visits only, over the whole UTC days of the window, most clicks first (ties by value), at most 10. At most 100 distinct values are kept per link, day and kind; later new ones count as "(other)". */
            topUserAgents: {
                /**
                 * Format: int64
                 * @description Clicks
                 */
                clicks: number;
                /** @description A User-Agent header as sent (clipped at 255 characters) */
                value: string;
            }[];
            /**
             * Format: int64
             * @description Lifetime: every click on the user's links, those deleted or expired since included (human_clicks + bot_clicks)
             */
            totalClicks: number;
            /** @description The time zone the day buckets follow */
            tz: string;
            /**
             * Format: int64
             * @description Lifetime: each existing link's distinct human visitors, added up (someone who visited two of the user's links counts twice)
             */
            uniqueVisitors: number;
            /**
             * Format: int64
             * @description Whose links these statistics cover
             */
            userId: number;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: {
        /** @description CORS: the request's Origin when it is one of CORS_ORIGINS (or `*` when any origin is allowed); absent otherwise */
        "Access-Control-Allow-Origin": string;
        /** @description private, no-cache on successful reads (revalidate with the ETag); no-store on writes and errors */
        "Cache-Control": string;
        /** @description Where the created resource is, or (the redirect) the link's original_url exactly as stored */
        Location: string;
        /** @description Remaining quota per policy (draft-ietf-httpapi-ratelimit-headers), e.g. `"default";r=599;t=42` */
        RateLimit: string;
        /** @description Quota policies applied to this request, e.g. `"default";q=600;w=60` */
        "RateLimit-Policy": string;
        /** @description Seconds to wait before retrying */
        "Retry-After": number;
        /** @description The bearer challenge (RFC 6750): `error="invalid_token"` for a refused credential, `error="insufficient_scope", scope="…"` for an API key without the scope the operation needs. A password-protected link's redirect challenges with Basic (API clients) or Form (its HTML page) */
        "WWW-Authenticate": string;
        /** @description The request's id: the client's own X-Request-Id when it is 1-128 safe characters, else a new UUID. Also `requestId` in error bodies and in the log. */
        "X-Request-Id": string;
    };
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    followShortLink: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The short code (case-sensitive) */
                code: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Redirect to the link's original_url (status set by REDIRECT_STATUS; 302 here) */
            302: {
                headers: {
                    /** @description private, no-store: every visit reaches the service and is counted */
                    "Cache-Control": components["headers"]["Cache-Control"];
                    /** @description The original_url, exactly as stored (with forward_query: plus the visit's query string) */
                    Location: components["headers"]["Location"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description LINK_PASSWORD_REQUIRED: the link has a password and none (or a wrong one) was given. Browsers get the password form */
            401: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    /** @description Basic (send the password as HTTP Basic credentials, any user name); for the HTML form: Form */
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                    "text/html": string;
                };
            };
            /** @description No link has this code, or it was deleted */
            404: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                    "text/html": string;
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description LINK_EXPIRED: the link has expired; LINK_EXHAUSTED: it has had its max_visits; LINK_DISABLED: an admin disabled it */
            410: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                    "text/html": string;
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: too many requests from this address, or too many wrong passwords for this link from it */
            429: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    /** @description Seconds to wait */
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                    "text/html": string;
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    unlockShortLink: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The short code (case-sensitive) */
                code: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/x-www-form-urlencoded": {
                    /**
                     * Format: password
                     * @description The link's password
                     */
                    password?: string;
                };
            };
        };
        responses: {
            /** @description See Other: the password was right; the browser follows to the target with a GET */
            303: {
                headers: {
                    /** @description private, no-store: every visit reaches the service and is counted */
                    "Cache-Control": components["headers"]["Cache-Control"];
                    /** @description The original_url, exactly as stored (with forward_query: plus the visit's query string) */
                    Location: components["headers"]["Location"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description LINK_PASSWORD_REQUIRED: the link has a password and none (or a wrong one) was given. Browsers get the password form */
            401: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    /** @description Basic (send the password as HTTP Basic credentials, any user name); for the HTML form: Form */
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                    "text/html": string;
                };
            };
            /** @description No link has this code, or it was deleted */
            404: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                    "text/html": string;
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description LINK_EXPIRED: the link has expired; LINK_EXHAUSTED: it has had its max_visits; LINK_DISABLED: an admin disabled it */
            410: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                    "text/html": string;
                };
            };
            /** @description PAYLOAD_TOO_LARGE: the body is larger than BODY_LIMIT_BYTES */
            413: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch), its charset is not UTF-8, or it has a Content-Encoding other than identity (see Accept-Encoding) */
            415: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: too many requests from this address, or too many wrong passwords for this link from it */
            429: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    /** @description Seconds to wait */
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                    "text/html": string;
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    createImport: {
        parameters: {
            query?: {
                /** @description For a text/csv body: report only */
                dry_run?: boolean;
                /** @description A code taken in Ferry: skip the item (listed), or stop the import. Default skip */
                on_conflict?: "skip" | "fail";
                /** @description For a text/csv body: the owner (default: the oldest active admin) */
                owner?: string;
                /** @description For a text/csv body: its format (default csv) */
                source?: "csv" | "bitly" | "dub";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "source": "shlink",
                 *       "url": "http://10.0.0.5:8080",
                 *       "api_key": "e1f…",
                 *       "owner": "alice"
                 *     }
                 */
                "application/json": {
                    /** @description The source API key (Shlink, Kutt) or bearer token (Bitly); used for this import only, never stored */
                    api_key?: string;
                    /** @description YOURLS: mysql://user:password@host:port/database */
                    database?: string;
                    /** @description The source's domain → Ferry's (`default` stands for a default domain). Without it, a source's default domain lands on Ferry's */
                    domain_map?: {
                        [key: string]: string;
                    };
                    /** @description Report what would happen; write no link */
                    dry_run?: boolean;
                    /** @description A code taken in Ferry: skip the item (listed), or stop the import. Default skip */
                    on_conflict?: "skip" | "fail";
                    /** @description The username that owns the imported links (default: the oldest active admin) */
                    owner?: string;
                    /** @description Where the links come from */
                    source: "shlink" | "kutt" | "yourls" | "bitly" | "dub" | "csv";
                    /** @description YOURLS's table prefix (default yourls_) */
                    table_prefix?: string;
                    /** @description The API of Shlink, Kutt or Bitly (a group: https://api-ssl.bitly.com/v4/groups/{group_guid}); private and loopback addresses are allowed */
                    url?: string;
                };
                "text/csv": unknown;
            };
        };
        responses: {
            /** @description The job, as it starts */
            202: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    /** @description /api/v1/imports/{id} */
                    Location: components["headers"]["Location"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ImportJob"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description PAYLOAD_TOO_LARGE: the body is larger than BODY_LIMIT_BYTES */
            413: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch), its charset is not UTF-8, or it has a Content-Encoding other than identity (see Accept-Encoding) */
            415: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    getImport: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A 64-bit id (at most 2^53-1) */
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The job */
            200: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ImportJob"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    getInstance: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description This instance */
            200: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Instance"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    listAllLinks: {
        parameters: {
            query?: {
                /** @description Cursor mode: the nextCursor of the previous page */
                cursor?: string;
                /** @description Items per page (default 20) */
                limit?: number;
                /** @description Sort direction (default asc) */
                order?: "asc" | "desc";
                /** @description Page mode: page number (default 1) */
                page?: number;
                /** @description Only links whose original_url, short_code or title contains this text (ignoring ASCII case; % and _ match themselves) */
                q?: string;
                /** @description Sort field (default id) */
                sort?: "id" | "created_at" | "click_count" | "expires_at";
                /** @description active: neither disabled nor expired; expired: past expires_at (the sweep removes such a link within a minute, leaving its code answering 410); disabled: disabled by an admin */
                status?: "active" | "expired" | "disabled";
                /** @description Only links with this tag (any case) */
                tag?: string;
                /** @description Only this user's links */
                user_id?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of links */
            200: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LinkList"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    createLink: {
        parameters: {
            query?: never;
            header?: {
                /** @description Optional. 1-255 printable ASCII characters, unique per request (a UUID v4 is a good choice). A retry with the same key and the same request returns the first response (with Idempotent-Replayed: true) and does nothing again; the same key with another request is 422, and while the first request is in flight 409. Keys are scoped to the caller and kept for IDEMPOTENCY_TTL_SECONDS (24 h by default). */
                "idempotency-key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["LinkCreate"];
            };
        };
        responses: {
            /** @description The new link (ETag: its version, "link-{id}-v{version}", for If-Match on PATCH) */
            201: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    /** @description Present on a replay: this is the stored response of an earlier request with the same Idempotency-Key */
                    "Idempotent-Replayed"?: "true";
                    /** @description The new link: /api/v1/links/{code} */
                    Location: components["headers"]["Location"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Link"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description CONFLICT (a unique value is taken, or a limit is reached), VERSION_CONFLICT (a stale `version`), IDEMPOTENCY_KEY_IN_USE (retry after Retry-After) or LAST_ADMIN (the change would leave no active admin) */
            409: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description PAYLOAD_TOO_LARGE: the body is larger than BODY_LIMIT_BYTES */
            413: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch), its charset is not UTF-8, or it has a Content-Encoding other than identity (see Accept-Encoding) */
            415: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description A well-formed request that cannot be done: ACCOUNT_NOT_ACTIVE (a pending account creates nothing), DESTINATION_BLOCKED (the target's host is on the blocked list), or IDEMPOTENCY_KEY_REUSED (the key was used for another request) */
            422: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    getLink: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description 1-8 of 0-9 a-z A-Z; case-sensitive */
                code: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The link (ETag: its version, "link-{id}-v{version}", for If-Match on PATCH) */
            200: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Link"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    deleteLink: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description 1-8 of 0-9 a-z A-Z; case-sensitive */
                code: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted */
            204: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description PAYLOAD_TOO_LARGE: the body is larger than BODY_LIMIT_BYTES */
            413: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch), its charset is not UTF-8, or it has a Content-Encoding other than identity (see Accept-Encoding) */
            415: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    updateLink: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description 1-8 of 0-9 a-z A-Z; case-sensitive */
                code: string;
            };
            cookie?: never;
        };
        /** @description JSON merge patch (RFC 7396): only the sent fields change; null clears expires_at, max_visits, tags, password and title */
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "original_url": "https://example.com/fixed-typo",
                 *       "max_visits": 100,
                 *       "password": null
                 *     }
                 */
                "application/json": {
                    /** @description Read-only; ignored */
                    bot_clicks?: unknown;
                    /** @description Read-only; ignored */
                    click_count?: unknown;
                    /** @description Read-only; ignored */
                    created_at?: unknown;
                    /** @description Admins only: true disables the link (visits answer 410 LINK_DISABLED), false enables it again. Anyone else: accepted only with the current value (otherwise 403) */
                    disabled?: boolean;
                    /** @description Admins only: why the link is disabled, with disabled: true or on a disabled link; null: no reason */
                    disabled_reason?: string | null;
                    /** @description A future instant; null: never */
                    expires_at?: string | null;
                    /** @description Append the visit's query string to the target (utm_* parameters pass through) */
                    forward_query?: boolean;
                    /** @description Read-only; ignored */
                    has_password?: unknown;
                    /** @description Read-only; ignored */
                    human_clicks?: unknown;
                    /** @description Read-only; ignored */
                    id?: unknown;
                    /** @description Human GET visits that are redirected; later visits answer 410 LINK_EXHAUSTED. Bots and HEAD do not count. null: no limit */
                    max_visits?: number | null;
                    /** @description Absolute http or https URL with a host; no credentials, whitespace or control characters; not a URL of this service. An internationalised URL is stored in its ASCII (punycode / percent-encoded) form. */
                    original_url?: string;
                    /** @description Write-only: visitors must give it (form or HTTP Basic) to be redirected. Stored as a salted scrypt hash. null: no password */
                    password?: string | null;
                    /** @description Cannot change: accepted only with the current value */
                    short_code?: string;
                    /** @description Read-only; ignored */
                    short_url?: unknown;
                    /** @description At most 10 distinct tags, stored lower case in the order given (duplicates are merged); null or [] removes them */
                    tags?: string[] | null;
                    /** @description What the link is, for people (at most 200 characters); searched by q. null: none */
                    title?: string | null;
                    /** @description Read-only; ignored */
                    updated_at?: unknown;
                    /** @description Read-only; ignored */
                    user_id?: unknown;
                };
            };
        };
        responses: {
            /** @description The changed link (ETag: its version, "link-{id}-v{version}", for If-Match on PATCH) */
            200: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Link"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description PRECONDITION_FAILED: If-Match does not match the current ETag */
            412: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description PAYLOAD_TOO_LARGE: the body is larger than BODY_LIMIT_BYTES */
            413: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch), its charset is not UTF-8, or it has a Content-Encoding other than identity (see Accept-Encoding) */
            415: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description A well-formed request that cannot be done: ACCOUNT_NOT_ACTIVE (a pending account creates nothing), DESTINATION_BLOCKED (the target's host is on the blocked list), or IDEMPOTENCY_KEY_REUSED (the key was used for another request) */
            422: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    listLinkClicks: {
        parameters: {
            query?: {
                /** @description JSON: the nextCursor of the previous page (the CSV export is the whole range) */
                cursor?: string;
                /** @description Only clicks at or after this instant */
                from?: string;
                /** @description Items per page (default 20) */
                limit?: number;
                /** @description Only clicks before this instant */
                to?: string;
            };
            header?: never;
            path: {
                /** @description 1-8 of 0-9 a-z A-Z; case-sensitive */
                code: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The records */
            200: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ClickRecordList"];
                    "text/csv": string;
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    getLinkQrCode: {
        parameters: {
            query?: {
                /** @description svg or png; wins over Accept */
                format?: "svg" | "png";
                /** @description Width and height in pixels (64-1024) */
                size?: number;
            };
            header?: never;
            path: {
                /** @description 1-8 of 0-9 a-z A-Z; case-sensitive */
                code: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The QR code of short_url (error correction M, 4-module quiet zone) */
            200: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "image/png": string;
                    "image/svg+xml": string;
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    getLinkStats: {
        parameters: {
            query?: {
                /** @description Window start (ISO 8601), rounded down to a whole hour / local day. Default: the first creation, or as far back as the bucket limit allows */
                from?: string;
                /** @description Bucket size of the time series (at most 1000 buckets) */
                interval?: "hour" | "day";
                /** @description Window end, exclusive, rounded up to a whole hour / local day. Default: now */
                to?: string;
                /** @description IANA time zone (e.g. `Europe/Berlin`): day buckets start at local midnight. Default `UTC`. An unknown zone is 400 naming `tz`. */
                tz?: string;
            };
            header?: never;
            path: {
                /** @description 1-8 of 0-9 a-z A-Z; case-sensitive */
                code: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Lifetime totals, and the time series and top lists of the window */
            200: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LinkStats"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    createLinks: {
        parameters: {
            query?: never;
            header?: {
                /** @description Optional. 1-255 printable ASCII characters, unique per request (a UUID v4 is a good choice). A retry with the same key and the same request returns the first response (with Idempotent-Replayed: true) and does nothing again; the same key with another request is 422, and while the first request is in flight 409. Keys are scoped to the caller and kept for IDEMPOTENCY_TTL_SECONDS (24 h by default). */
                "idempotency-key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "links": [
                 *         {
                 *           "original_url": "https://example.com/a"
                 *         },
                 *         {
                 *           "original_url": "https://example.com/b",
                 *           "short_code": "promo26"
                 *         }
                 *       ]
                 *     }
                 */
                "application/json": {
                    /** @description 1-100 links, created in this order */
                    links: unknown[];
                };
            };
        };
        responses: {
            /** @description One result per item, in input order */
            200: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    /** @description Present on a replay: this is the stored response of an earlier request with the same Idempotency-Key */
                    "Idempotent-Replayed"?: "true";
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LinkBulkResult"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description CONFLICT (a unique value is taken, or a limit is reached), VERSION_CONFLICT (a stale `version`), IDEMPOTENCY_KEY_IN_USE (retry after Retry-After) or LAST_ADMIN (the change would leave no active admin) */
            409: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description PAYLOAD_TOO_LARGE: the body is larger than BODY_LIMIT_BYTES */
            413: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch), its charset is not UTF-8, or it has a Content-Encoding other than identity (see Accept-Encoding) */
            415: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description A well-formed request that cannot be done: ACCOUNT_NOT_ACTIVE (a pending account creates nothing), DESTINATION_BLOCKED (the target's host is on the blocked list), or IDEMPOTENCY_KEY_REUSED (the key was used for another request) */
            422: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    createOrder: {
        parameters: {
            query?: never;
            header: {
                /** @description Required. 1-255 printable ASCII characters, unique per request (a UUID v4 is a good choice). A retry with the same key and the same request returns the first response (with Idempotent-Replayed: true) and does nothing again; the same key with another request is 422, and while the first request is in flight 409. Keys are scoped to the caller and kept for IDEMPOTENCY_TTL_SECONDS (24 h by default). */
                "idempotency-key": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "itemId": 42,
                 *       "quantity": 3
                 *     }
                 */
                "application/json": {
                    /** @description Read-only; ignored */
                    createdAt?: unknown;
                    /** @description Read-only; ignored */
                    id?: unknown;
                    /**
                     * Format: int64
                     * @description The ordered item (an integer >= 1)
                     */
                    itemId: number;
                    /**
                     * Format: int32
                     * @description 1-1000
                     */
                    quantity: number;
                    /**
                     * Format: int64
                     * @description Read-only: an order belongs to the caller. Echoing the caller's own id is accepted; another id is 403
                     */
                    userId?: number;
                };
            };
        };
        responses: {
            /** @description The order, created (or, on a replay, the stored response of the first request) */
            201: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    /** @description Present on a replay: this is the stored response of an earlier request with the same Idempotency-Key */
                    "Idempotent-Replayed"?: "true";
                    /** @description The new order: /api/v1/users/{userId}/orders/{id} */
                    Location: components["headers"]["Location"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Order"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description CONFLICT (a unique value is taken, or a limit is reached), VERSION_CONFLICT (a stale `version`), IDEMPOTENCY_KEY_IN_USE (retry after Retry-After) or LAST_ADMIN (the change would leave no active admin) */
            409: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description PAYLOAD_TOO_LARGE: the body is larger than BODY_LIMIT_BYTES */
            413: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch), its charset is not UTF-8, or it has a Content-Encoding other than identity (see Accept-Encoding) */
            415: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description A well-formed request that cannot be done: ACCOUNT_NOT_ACTIVE (a pending account creates nothing), DESTINATION_BLOCKED (the target's host is on the blocked list), or IDEMPOTENCY_KEY_REUSED (the key was used for another request) */
            422: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    createToken: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** Format: password */
                    password: string;
                    username: string;
                };
            };
        };
        responses: {
            /** @description A new bearer token */
            201: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    /** @description The token, by its jti: DELETE it to revoke it */
                    Location: components["headers"]["Location"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Token"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description PAYLOAD_TOO_LARGE: the body is larger than BODY_LIMIT_BYTES */
            413: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch), its charset is not UTF-8, or it has a Content-Encoding other than identity (see Accept-Encoding) */
            415: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    revokeToken: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                jti: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Revoked */
            204: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description PAYLOAD_TOO_LARGE: the body is larger than BODY_LIMIT_BYTES */
            413: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch), its charset is not UTF-8, or it has a Content-Encoding other than identity (see Accept-Encoding) */
            415: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    revokeCurrentToken: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Revoked */
            204: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description PAYLOAD_TOO_LARGE: the body is larger than BODY_LIMIT_BYTES */
            413: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch), its charset is not UTF-8, or it has a Content-Encoding other than identity (see Accept-Encoding) */
            415: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    listUsers: {
        parameters: {
            query?: {
                /** @description Cursor mode: the nextCursor of the previous page */
                cursor?: string;
                /** @description Items per page (default 20) */
                limit?: number;
                /** @description Sort direction (default asc) */
                order?: "asc" | "desc";
                /** @description Page mode: page number (default 1) */
                page?: number;
                /** @description Only an admin may set or change it */
                role?: "user" | "admin";
                /** @description Sort field (default id) */
                sort?: "id" | "username" | "email" | "createdAt";
                /** @description A new user is pending; only an admin may change it */
                status?: "pending" | "active" | "suspended";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of users */
            200: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UserList"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    createUser: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "username": "ada",
                 *       "email": "ada@example.com",
                 *       "password": "correct horse battery",
                 *       "name": "Ada Lovelace",
                 *       "age": 36
                 *     }
                 */
                "application/json": {
                    age?: number | null;
                    /** @description Read-only; ignored */
                    createdAt?: unknown;
                    /**
                     * Format: email
                     * @description Unique ignoring case
                     */
                    email: string;
                    /** @description Read-only; ignored */
                    id?: unknown;
                    name?: string | null;
                    /**
                     * Format: password
                     * @description Write-only; stored as a salted scrypt hash
                     */
                    password: string;
                    /** @description Only an admin may set or change it */
                    role?: "user" | "admin";
                    /** @description A new user is pending; only an admin may change it */
                    status?: "pending" | "active" | "suspended";
                    /** @description Read-only; ignored */
                    updatedAt?: unknown;
                    /** @description 3-32 of A-Z a-z 0-9 . _ -, unique ignoring case */
                    username: string;
                    /** @description Read-only; ignored */
                    version?: unknown;
                };
            };
        };
        responses: {
            /** @description The new user (pending unless REGISTRATION=open or an admin set the status) */
            201: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    /** @description The new user: /api/v1/users/{id} */
                    Location: components["headers"]["Location"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["User"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description CONFLICT (a unique value is taken, or a limit is reached), VERSION_CONFLICT (a stale `version`), IDEMPOTENCY_KEY_IN_USE (retry after Retry-After) or LAST_ADMIN (the change would leave no active admin) */
            409: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description PAYLOAD_TOO_LARGE: the body is larger than BODY_LIMIT_BYTES */
            413: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch), its charset is not UTF-8, or it has a Content-Encoding other than identity (see Accept-Encoding) */
            415: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    getUser: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A 64-bit id (at most 2^53-1) */
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The user (ETag: its version) */
            200: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["User"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    replaceUser: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A 64-bit id (at most 2^53-1) */
                id: number;
            };
            cookie?: never;
        };
        /** @description PUT: omitted name/age become null; omitted role/status stay as they are. A change of password, role or status revokes every token issued to the user before it */
        requestBody: {
            content: {
                "application/json": {
                    age?: number | null;
                    /** @description Read-only; ignored */
                    createdAt?: unknown;
                    /**
                     * Format: password
                     * @description Your current password: required when you change your own `password` (not when an admin changes another user's); ignored otherwise
                     */
                    currentPassword?: string;
                    /**
                     * Format: email
                     * @description Unique ignoring case
                     */
                    email: string;
                    /** @description Read-only; ignored */
                    id?: unknown;
                    name?: string | null;
                    /**
                     * Format: password
                     * @description Write-only; stored as a salted scrypt hash
                     */
                    password?: string;
                    /** @description Only an admin may set or change it */
                    role?: "user" | "admin";
                    /** @description A new user is pending; only an admin may change it */
                    status?: "pending" | "active" | "suspended";
                    /** @description Read-only; ignored */
                    updatedAt?: unknown;
                    /** @description 3-32 of A-Z a-z 0-9 . _ -, unique ignoring case */
                    username: string;
                    /**
                     * Format: int64
                     * @description Increases by one on every change
                     */
                    version?: number;
                };
            };
        };
        responses: {
            /** @description The user as it now is */
            200: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["User"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description CONFLICT (a unique value is taken, or a limit is reached), VERSION_CONFLICT (a stale `version`), IDEMPOTENCY_KEY_IN_USE (retry after Retry-After) or LAST_ADMIN (the change would leave no active admin) */
            409: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description PRECONDITION_FAILED: If-Match does not match the current ETag */
            412: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description PAYLOAD_TOO_LARGE: the body is larger than BODY_LIMIT_BYTES */
            413: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch), its charset is not UTF-8, or it has a Content-Encoding other than identity (see Accept-Encoding) */
            415: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    deleteUser: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A 64-bit id (at most 2^53-1) */
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted */
            204: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description CONFLICT (a unique value is taken, or a limit is reached), VERSION_CONFLICT (a stale `version`), IDEMPOTENCY_KEY_IN_USE (retry after Retry-After) or LAST_ADMIN (the change would leave no active admin) */
            409: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description PRECONDITION_FAILED: If-Match does not match the current ETag */
            412: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description PAYLOAD_TOO_LARGE: the body is larger than BODY_LIMIT_BYTES */
            413: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch), its charset is not UTF-8, or it has a Content-Encoding other than identity (see Accept-Encoding) */
            415: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    updateUser: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A 64-bit id (at most 2^53-1) */
                id: number;
            };
            cookie?: never;
        };
        /** @description JSON merge patch (RFC 7396): only sent fields change; null clears name or age */
        requestBody: {
            content: {
                "application/json": {
                    age?: number | null;
                    /** @description Read-only; ignored */
                    createdAt?: unknown;
                    /**
                     * Format: password
                     * @description Your current password: required when you change your own `password` (not when an admin changes another user's); ignored otherwise
                     */
                    currentPassword?: string;
                    /**
                     * Format: email
                     * @description Unique ignoring case
                     */
                    email?: string;
                    /** @description Read-only; ignored */
                    id?: unknown;
                    name?: string | null;
                    /**
                     * Format: password
                     * @description Write-only; stored as a salted scrypt hash
                     */
                    password?: string;
                    /** @description Only an admin may set or change it */
                    role?: "user" | "admin";
                    /** @description A new user is pending; only an admin may change it */
                    status?: "pending" | "active" | "suspended";
                    /** @description Read-only; ignored */
                    updatedAt?: unknown;
                    /** @description 3-32 of A-Z a-z 0-9 . _ -, unique ignoring case */
                    username?: string;
                    /**
                     * Format: int64
                     * @description Increases by one on every change
                     */
                    version?: number;
                };
            };
        };
        responses: {
            /** @description The user as it now is */
            200: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["User"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description CONFLICT (a unique value is taken, or a limit is reached), VERSION_CONFLICT (a stale `version`), IDEMPOTENCY_KEY_IN_USE (retry after Retry-After) or LAST_ADMIN (the change would leave no active admin) */
            409: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description PRECONDITION_FAILED: If-Match does not match the current ETag */
            412: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description PAYLOAD_TOO_LARGE: the body is larger than BODY_LIMIT_BYTES */
            413: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch), its charset is not UTF-8, or it has a Content-Encoding other than identity (see Accept-Encoding) */
            415: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    listApiKeys: {
        parameters: {
            query?: {
                /** @description Cursor mode: the nextCursor of the previous page */
                cursor?: string;
                /** @description Items per page (default 20) */
                limit?: number;
                /** @description Sort direction (default asc) */
                order?: "asc" | "desc";
                /** @description Page mode: page number (default 1) */
                page?: number;
                /** @description Sort field (default created_at) */
                sort?: "created_at" | "name";
            };
            header?: never;
            path: {
                /** @description A user id (at most 2^53-1), or `me` for the caller's own id (a token is then required) */
                id: number | "me";
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of key records */
            200: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApiKeyList"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    createApiKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A user id (at most 2^53-1), or `me` for the caller's own id (a token is then required) */
                id: number | "me";
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "deploy script",
                 *       "scopes": [
                 *         "links:read",
                 *         "links:write"
                 *       ],
                 *       "expires_at": "2027-01-01T00:00:00.000Z"
                 *     }
                 */
                "application/json": {
                    /** @description Read-only; ignored */
                    created_at?: unknown;
                    expires_at?: string | null;
                    /** @description Read-only; ignored */
                    id?: unknown;
                    /** @description Read-only; ignored */
                    last_used_at?: unknown;
                    /** @description 1-64 characters, to tell keys apart */
                    name: string;
                    /** @description Read-only; ignored */
                    prefix?: unknown;
                    /** @description What the key may do: a non-empty subset of the scopes */
                    scopes: ("links:read" | "links:write" | "stats:read" | "orders:read" | "orders:write" | "users:read")[];
                };
            };
        };
        responses: {
            /** @description The key record and, this once, the key itself */
            201: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    /** @description The new key: /api/v1/users/{id}/api-keys/{key_id} */
                    Location: components["headers"]["Location"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApiKeyCreated"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description CONFLICT (a unique value is taken, or a limit is reached), VERSION_CONFLICT (a stale `version`), IDEMPOTENCY_KEY_IN_USE (retry after Retry-After) or LAST_ADMIN (the change would leave no active admin) */
            409: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description PAYLOAD_TOO_LARGE: the body is larger than BODY_LIMIT_BYTES */
            413: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch), its charset is not UTF-8, or it has a Content-Encoding other than identity (see Accept-Encoding) */
            415: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description A well-formed request that cannot be done: ACCOUNT_NOT_ACTIVE (a pending account creates nothing), DESTINATION_BLOCKED (the target's host is on the blocked list), or IDEMPOTENCY_KEY_REUSED (the key was used for another request) */
            422: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    getApiKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A user id (at most 2^53-1), or `me` for the caller's own id (a token is then required) */
                id: number | "me";
                /** @description A 64-bit id (at most 2^53-1) */
                key_id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The key record */
            200: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApiKey"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    revokeApiKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A user id (at most 2^53-1), or `me` for the caller's own id (a token is then required) */
                id: number | "me";
                /** @description A 64-bit id (at most 2^53-1) */
                key_id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Revoked */
            204: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description PAYLOAD_TOO_LARGE: the body is larger than BODY_LIMIT_BYTES */
            413: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch), its charset is not UTF-8, or it has a Content-Encoding other than identity (see Accept-Encoding) */
            415: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    listUserLinks: {
        parameters: {
            query?: {
                /** @description Cursor mode: the nextCursor of the previous page */
                cursor?: string;
                /** @description Items per page (default 20) */
                limit?: number;
                /** @description Sort direction (default asc) */
                order?: "asc" | "desc";
                /** @description Page mode: page number (default 1) */
                page?: number;
                /** @description Only links whose original_url, short_code or title contains this text (ignoring ASCII case; % and _ match themselves) */
                q?: string;
                /** @description Sort field (default id) */
                sort?: "id" | "created_at" | "click_count" | "expires_at";
                /** @description Only links with this tag (any case) */
                tag?: string;
            };
            header?: never;
            path: {
                /** @description A user id (at most 2^53-1), or `me` for the caller's own id (a token is then required) */
                id: number | "me";
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of the user's links */
            200: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LinkList"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    listUserOrders: {
        parameters: {
            query?: {
                /** @description Cursor mode: the nextCursor of the previous page */
                cursor?: string;
                /** @description Only orders of this item */
                itemId?: number;
                /** @description Items per page (default 20) */
                limit?: number;
                /** @description Sort direction (default asc) */
                order?: "asc" | "desc";
                /** @description Page mode: page number (default 1) */
                page?: number;
                /** @description Sort field (default id) */
                sort?: "id" | "createdAt" | "itemId" | "quantity";
            };
            header?: never;
            path: {
                /** @description A user id (at most 2^53-1), or `me` for the caller's own id (a token is then required) */
                id: number | "me";
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of the user's orders */
            200: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OrderList"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    getUserOrder: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A user id (at most 2^53-1), or `me` for the caller's own id (a token is then required) */
                id: number | "me";
                /** @description A 64-bit id (at most 2^53-1) */
                order_id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The order */
            200: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Order"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    getUserStats: {
        parameters: {
            query?: {
                /** @description Window start (ISO 8601), rounded down to a whole hour / local day. Default: the first creation, or as far back as the bucket limit allows */
                from?: string;
                /** @description Bucket size of the time series (at most 1000 buckets) */
                interval?: "hour" | "day";
                /** @description Window end, exclusive, rounded up to a whole hour / local day. Default: now */
                to?: string;
                /** @description IANA time zone (e.g. `Europe/Berlin`): day buckets start at local midnight. Default `UTC`. An unknown zone is 400 naming `tz`. */
                tz?: string;
            };
            header?: never;
            path: {
                /** @description A user id (at most 2^53-1), or `me` for the caller's own id (a token is then required) */
                id: number | "me";
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Totals, time series and top lists over the user's links */
            200: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UserStats"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    getCurrentUser: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The caller */
            200: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["User"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    getInstanceV2: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description This instance */
            200: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["InstanceV2"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    listAllLinksV2: {
        parameters: {
            query?: {
                /** @description Cursor mode: the nextCursor of the previous page */
                cursor?: string;
                /** @description Items per page (default 20) */
                limit?: number;
                /** @description Sort direction (default asc) */
                order?: "asc" | "desc";
                /** @description Only links whose original_url, short_code or title contains this text (ignoring ASCII case; % and _ match themselves) */
                q?: string;
                /** @description Sort field (default id) */
                sort?: "id" | "createdAt" | "clickCount" | "expiresAt";
                /** @description active: neither disabled nor expired; expired: past expires_at (the sweep removes such a link within a minute, leaving its code answering 410); disabled: disabled by an admin */
                status?: "active" | "expired" | "disabled";
                /** @description Only links with this tag (any case) */
                tag?: string;
                /** @description Only this user's links */
                userId?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of links */
            200: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LinkListV2"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    createLinkV2: {
        parameters: {
            query?: never;
            header?: {
                /** @description Optional. 1-255 printable ASCII characters, unique per request (a UUID v4 is a good choice). A retry with the same key and the same request returns the first response (with Idempotent-Replayed: true) and does nothing again; the same key with another request is 422, and while the first request is in flight 409. Keys are scoped to the caller and kept for IDEMPOTENCY_TTL_SECONDS (24 h by default). */
                "idempotency-key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["LinkCreateV2"];
            };
        };
        responses: {
            /** @description The new link (ETag: its version, "link-{id}-v{version}", for If-Match on PATCH) */
            201: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    /** @description Present on a replay: this is the stored response of an earlier request with the same Idempotency-Key */
                    "Idempotent-Replayed"?: "true";
                    /** @description The new link: /api/v1/links/{code} */
                    Location: components["headers"]["Location"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LinkV2"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description CONFLICT (a unique value is taken, or a limit is reached), VERSION_CONFLICT (a stale `version`), IDEMPOTENCY_KEY_IN_USE (retry after Retry-After) or LAST_ADMIN (the change would leave no active admin) */
            409: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description PAYLOAD_TOO_LARGE: the body is larger than BODY_LIMIT_BYTES */
            413: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch), its charset is not UTF-8, or it has a Content-Encoding other than identity (see Accept-Encoding) */
            415: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description A well-formed request that cannot be done: ACCOUNT_NOT_ACTIVE (a pending account creates nothing), DESTINATION_BLOCKED (the target's host is on the blocked list), or IDEMPOTENCY_KEY_REUSED (the key was used for another request) */
            422: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    getLinkV2: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description 1-8 of 0-9 a-z A-Z; case-sensitive */
                code: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The link (ETag: its version, "link-{id}-v{version}", for If-Match on PATCH) */
            200: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LinkV2"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    deleteLinkV2: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description 1-8 of 0-9 a-z A-Z; case-sensitive */
                code: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted */
            204: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description PAYLOAD_TOO_LARGE: the body is larger than BODY_LIMIT_BYTES */
            413: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch), its charset is not UTF-8, or it has a Content-Encoding other than identity (see Accept-Encoding) */
            415: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    updateLinkV2: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description 1-8 of 0-9 a-z A-Z; case-sensitive */
                code: string;
            };
            cookie?: never;
        };
        /** @description JSON merge patch (RFC 7396): only the sent fields change; null clears expires_at, max_visits, tags, password and title */
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "originalUrl": "https://example.com/fixed-typo",
                 *       "maxVisits": 100,
                 *       "password": null
                 *     }
                 */
                "application/json": {
                    /** @description Read-only; ignored */
                    botClicks?: unknown;
                    /** @description Read-only; ignored */
                    clickCount?: unknown;
                    /** @description Read-only; ignored */
                    createdAt?: unknown;
                    /** @description Admins only: true disables the link (visits answer 410 LINK_DISABLED), false enables it again. Anyone else: accepted only with the current value (otherwise 403) */
                    disabled?: boolean;
                    /** @description Admins only: why the link is disabled, with disabled: true or on a disabled link; null: no reason */
                    disabledReason?: string | null;
                    /** @description A future instant; null: never */
                    expiresAt?: string | null;
                    /** @description Append the visit's query string to the target (utm_* parameters pass through) */
                    forwardQuery?: boolean;
                    /** @description Read-only; ignored */
                    hasPassword?: unknown;
                    /** @description Read-only; ignored */
                    humanClicks?: unknown;
                    /** @description Read-only; ignored */
                    id?: unknown;
                    /** @description Human GET visits that are redirected; later visits answer 410 LINK_EXHAUSTED. Bots and HEAD do not count. null: no limit */
                    maxVisits?: number | null;
                    /** @description Absolute http or https URL with a host; no credentials, whitespace or control characters; not a URL of this service. An internationalised URL is stored in its ASCII (punycode / percent-encoded) form. */
                    originalUrl?: string;
                    /** @description Write-only: visitors must give it (form or HTTP Basic) to be redirected. Stored as a salted scrypt hash. null: no password */
                    password?: string | null;
                    /** @description Cannot change: accepted only with the current value */
                    shortCode?: string;
                    /** @description Read-only; ignored */
                    shortUrl?: unknown;
                    /** @description At most 10 distinct tags, stored lower case in the order given (duplicates are merged); null or [] removes them */
                    tags?: string[] | null;
                    /** @description What the link is, for people (at most 200 characters); searched by q. null: none */
                    title?: string | null;
                    /** @description Read-only; ignored */
                    updatedAt?: unknown;
                    /** @description Read-only; ignored */
                    userId?: unknown;
                };
            };
        };
        responses: {
            /** @description The changed link (ETag: its version, "link-{id}-v{version}", for If-Match on PATCH) */
            200: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LinkV2"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description PRECONDITION_FAILED: If-Match does not match the current ETag */
            412: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description PAYLOAD_TOO_LARGE: the body is larger than BODY_LIMIT_BYTES */
            413: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch), its charset is not UTF-8, or it has a Content-Encoding other than identity (see Accept-Encoding) */
            415: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description A well-formed request that cannot be done: ACCOUNT_NOT_ACTIVE (a pending account creates nothing), DESTINATION_BLOCKED (the target's host is on the blocked list), or IDEMPOTENCY_KEY_REUSED (the key was used for another request) */
            422: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    listLinkClicksV2: {
        parameters: {
            query?: {
                /** @description JSON: the nextCursor of the previous page (the CSV export is the whole range) */
                cursor?: string;
                /** @description Only clicks at or after this instant */
                from?: string;
                /** @description Items per page (default 20) */
                limit?: number;
                /** @description Only clicks before this instant */
                to?: string;
            };
            header?: never;
            path: {
                /** @description 1-8 of 0-9 a-z A-Z; case-sensitive */
                code: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The records */
            200: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ClickRecordListV2"];
                    "text/csv": string;
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    getLinkQrCodeV2: {
        parameters: {
            query?: {
                /** @description svg or png; wins over Accept */
                format?: "svg" | "png";
                /** @description Width and height in pixels (64-1024) */
                size?: number;
            };
            header?: never;
            path: {
                /** @description 1-8 of 0-9 a-z A-Z; case-sensitive */
                code: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The QR code of short_url (error correction M, 4-module quiet zone) */
            200: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "image/png": string;
                    "image/svg+xml": string;
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    getLinkStatsV2: {
        parameters: {
            query?: {
                /** @description Window start (ISO 8601), rounded down to a whole hour / local day. Default: the first creation, or as far back as the bucket limit allows */
                from?: string;
                /** @description Bucket size of the time series (at most 1000 buckets) */
                interval?: "hour" | "day";
                /** @description Window end, exclusive, rounded up to a whole hour / local day. Default: now */
                to?: string;
                /** @description IANA time zone (e.g. `Europe/Berlin`): day buckets start at local midnight. Default `UTC`. An unknown zone is 400 naming `tz`. */
                tz?: string;
            };
            header?: never;
            path: {
                /** @description 1-8 of 0-9 a-z A-Z; case-sensitive */
                code: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Lifetime totals, and the time series and top lists of the window */
            200: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LinkStatsV2"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    createLinksV2: {
        parameters: {
            query?: never;
            header?: {
                /** @description Optional. 1-255 printable ASCII characters, unique per request (a UUID v4 is a good choice). A retry with the same key and the same request returns the first response (with Idempotent-Replayed: true) and does nothing again; the same key with another request is 422, and while the first request is in flight 409. Keys are scoped to the caller and kept for IDEMPOTENCY_TTL_SECONDS (24 h by default). */
                "idempotency-key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "links": [
                 *         {
                 *           "original_url": "https://example.com/a"
                 *         },
                 *         {
                 *           "original_url": "https://example.com/b",
                 *           "short_code": "promo26"
                 *         }
                 *       ]
                 *     }
                 */
                "application/json": {
                    /** @description 1-100 links, created in this order */
                    links: unknown[];
                };
            };
        };
        responses: {
            /** @description One result per item, in input order */
            200: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    /** @description Present on a replay: this is the stored response of an earlier request with the same Idempotency-Key */
                    "Idempotent-Replayed"?: "true";
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LinkBulkResultV2"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description CONFLICT (a unique value is taken, or a limit is reached), VERSION_CONFLICT (a stale `version`), IDEMPOTENCY_KEY_IN_USE (retry after Retry-After) or LAST_ADMIN (the change would leave no active admin) */
            409: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description PAYLOAD_TOO_LARGE: the body is larger than BODY_LIMIT_BYTES */
            413: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch), its charset is not UTF-8, or it has a Content-Encoding other than identity (see Accept-Encoding) */
            415: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description A well-formed request that cannot be done: ACCOUNT_NOT_ACTIVE (a pending account creates nothing), DESTINATION_BLOCKED (the target's host is on the blocked list), or IDEMPOTENCY_KEY_REUSED (the key was used for another request) */
            422: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    createOrderV2: {
        parameters: {
            query?: never;
            header: {
                /** @description Required. 1-255 printable ASCII characters, unique per request (a UUID v4 is a good choice). A retry with the same key and the same request returns the first response (with Idempotent-Replayed: true) and does nothing again; the same key with another request is 422, and while the first request is in flight 409. Keys are scoped to the caller and kept for IDEMPOTENCY_TTL_SECONDS (24 h by default). */
                "idempotency-key": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "itemId": 42,
                 *       "quantity": 3
                 *     }
                 */
                "application/json": {
                    /** @description Read-only; ignored */
                    createdAt?: unknown;
                    /** @description Read-only; ignored */
                    id?: unknown;
                    /**
                     * Format: int64
                     * @description The ordered item (an integer >= 1)
                     */
                    itemId: number;
                    /**
                     * Format: int32
                     * @description 1-1000
                     */
                    quantity: number;
                    /**
                     * Format: int64
                     * @description Read-only: an order belongs to the caller. Echoing the caller's own id is accepted; another id is 403
                     */
                    userId?: number;
                };
            };
        };
        responses: {
            /** @description The order, created (or, on a replay, the stored response of the first request) */
            201: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    /** @description Present on a replay: this is the stored response of an earlier request with the same Idempotency-Key */
                    "Idempotent-Replayed"?: "true";
                    /** @description The new order: /api/v1/users/{userId}/orders/{id} */
                    Location: components["headers"]["Location"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Order"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description CONFLICT (a unique value is taken, or a limit is reached), VERSION_CONFLICT (a stale `version`), IDEMPOTENCY_KEY_IN_USE (retry after Retry-After) or LAST_ADMIN (the change would leave no active admin) */
            409: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description PAYLOAD_TOO_LARGE: the body is larger than BODY_LIMIT_BYTES */
            413: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch), its charset is not UTF-8, or it has a Content-Encoding other than identity (see Accept-Encoding) */
            415: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description A well-formed request that cannot be done: ACCOUNT_NOT_ACTIVE (a pending account creates nothing), DESTINATION_BLOCKED (the target's host is on the blocked list), or IDEMPOTENCY_KEY_REUSED (the key was used for another request) */
            422: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    createTokenV2: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** Format: password */
                    password: string;
                    username: string;
                };
            };
        };
        responses: {
            /** @description A new bearer token */
            201: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    /** @description The token, by its jti: DELETE it to revoke it */
                    Location: components["headers"]["Location"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Token"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description PAYLOAD_TOO_LARGE: the body is larger than BODY_LIMIT_BYTES */
            413: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch), its charset is not UTF-8, or it has a Content-Encoding other than identity (see Accept-Encoding) */
            415: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    revokeTokenV2: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                jti: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Revoked */
            204: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description PAYLOAD_TOO_LARGE: the body is larger than BODY_LIMIT_BYTES */
            413: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch), its charset is not UTF-8, or it has a Content-Encoding other than identity (see Accept-Encoding) */
            415: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    revokeCurrentTokenV2: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Revoked */
            204: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description PAYLOAD_TOO_LARGE: the body is larger than BODY_LIMIT_BYTES */
            413: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch), its charset is not UTF-8, or it has a Content-Encoding other than identity (see Accept-Encoding) */
            415: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    listUsersV2: {
        parameters: {
            query?: {
                /** @description Cursor mode: the nextCursor of the previous page */
                cursor?: string;
                /** @description Items per page (default 20) */
                limit?: number;
                /** @description Sort direction (default asc) */
                order?: "asc" | "desc";
                /** @description Only an admin may set or change it */
                role?: "user" | "admin";
                /** @description Sort field (default id) */
                sort?: "id" | "username" | "email" | "createdAt";
                /** @description A new user is pending; only an admin may change it */
                status?: "pending" | "active" | "suspended";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of users */
            200: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UserList"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    createUserV2: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "username": "ada",
                 *       "email": "ada@example.com",
                 *       "password": "correct horse battery",
                 *       "name": "Ada Lovelace",
                 *       "age": 36
                 *     }
                 */
                "application/json": {
                    age?: number | null;
                    /** @description Read-only; ignored */
                    createdAt?: unknown;
                    /**
                     * Format: email
                     * @description Unique ignoring case
                     */
                    email: string;
                    /** @description Read-only; ignored */
                    id?: unknown;
                    name?: string | null;
                    /**
                     * Format: password
                     * @description Write-only; stored as a salted scrypt hash
                     */
                    password: string;
                    /** @description Only an admin may set or change it */
                    role?: "user" | "admin";
                    /** @description A new user is pending; only an admin may change it */
                    status?: "pending" | "active" | "suspended";
                    /** @description Read-only; ignored */
                    updatedAt?: unknown;
                    /** @description 3-32 of A-Z a-z 0-9 . _ -, unique ignoring case */
                    username: string;
                    /** @description Read-only; ignored */
                    version?: unknown;
                };
            };
        };
        responses: {
            /** @description The new user (pending unless REGISTRATION=open or an admin set the status) */
            201: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    /** @description The new user: /api/v1/users/{id} */
                    Location: components["headers"]["Location"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["User"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description CONFLICT (a unique value is taken, or a limit is reached), VERSION_CONFLICT (a stale `version`), IDEMPOTENCY_KEY_IN_USE (retry after Retry-After) or LAST_ADMIN (the change would leave no active admin) */
            409: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description PAYLOAD_TOO_LARGE: the body is larger than BODY_LIMIT_BYTES */
            413: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch), its charset is not UTF-8, or it has a Content-Encoding other than identity (see Accept-Encoding) */
            415: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    getUserV2: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A 64-bit id (at most 2^53-1) */
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The user (ETag: its version) */
            200: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["User"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    replaceUserV2: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A 64-bit id (at most 2^53-1) */
                id: number;
            };
            cookie?: never;
        };
        /** @description PUT: omitted name/age become null; omitted role/status stay as they are. A change of password, role or status revokes every token issued to the user before it */
        requestBody: {
            content: {
                "application/json": {
                    age?: number | null;
                    /** @description Read-only; ignored */
                    createdAt?: unknown;
                    /**
                     * Format: password
                     * @description Your current password: required when you change your own `password` (not when an admin changes another user's); ignored otherwise
                     */
                    currentPassword?: string;
                    /**
                     * Format: email
                     * @description Unique ignoring case
                     */
                    email: string;
                    /** @description Read-only; ignored */
                    id?: unknown;
                    name?: string | null;
                    /**
                     * Format: password
                     * @description Write-only; stored as a salted scrypt hash
                     */
                    password?: string;
                    /** @description Only an admin may set or change it */
                    role?: "user" | "admin";
                    /** @description A new user is pending; only an admin may change it */
                    status?: "pending" | "active" | "suspended";
                    /** @description Read-only; ignored */
                    updatedAt?: unknown;
                    /** @description 3-32 of A-Z a-z 0-9 . _ -, unique ignoring case */
                    username: string;
                    /**
                     * Format: int64
                     * @description Increases by one on every change
                     */
                    version?: number;
                };
            };
        };
        responses: {
            /** @description The user as it now is */
            200: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["User"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description CONFLICT (a unique value is taken, or a limit is reached), VERSION_CONFLICT (a stale `version`), IDEMPOTENCY_KEY_IN_USE (retry after Retry-After) or LAST_ADMIN (the change would leave no active admin) */
            409: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description PRECONDITION_FAILED: If-Match does not match the current ETag */
            412: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description PAYLOAD_TOO_LARGE: the body is larger than BODY_LIMIT_BYTES */
            413: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch), its charset is not UTF-8, or it has a Content-Encoding other than identity (see Accept-Encoding) */
            415: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    deleteUserV2: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A 64-bit id (at most 2^53-1) */
                id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted */
            204: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description CONFLICT (a unique value is taken, or a limit is reached), VERSION_CONFLICT (a stale `version`), IDEMPOTENCY_KEY_IN_USE (retry after Retry-After) or LAST_ADMIN (the change would leave no active admin) */
            409: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description PRECONDITION_FAILED: If-Match does not match the current ETag */
            412: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description PAYLOAD_TOO_LARGE: the body is larger than BODY_LIMIT_BYTES */
            413: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch), its charset is not UTF-8, or it has a Content-Encoding other than identity (see Accept-Encoding) */
            415: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    updateUserV2: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A 64-bit id (at most 2^53-1) */
                id: number;
            };
            cookie?: never;
        };
        /** @description JSON merge patch (RFC 7396): only sent fields change; null clears name or age */
        requestBody: {
            content: {
                "application/json": {
                    age?: number | null;
                    /** @description Read-only; ignored */
                    createdAt?: unknown;
                    /**
                     * Format: password
                     * @description Your current password: required when you change your own `password` (not when an admin changes another user's); ignored otherwise
                     */
                    currentPassword?: string;
                    /**
                     * Format: email
                     * @description Unique ignoring case
                     */
                    email?: string;
                    /** @description Read-only; ignored */
                    id?: unknown;
                    name?: string | null;
                    /**
                     * Format: password
                     * @description Write-only; stored as a salted scrypt hash
                     */
                    password?: string;
                    /** @description Only an admin may set or change it */
                    role?: "user" | "admin";
                    /** @description A new user is pending; only an admin may change it */
                    status?: "pending" | "active" | "suspended";
                    /** @description Read-only; ignored */
                    updatedAt?: unknown;
                    /** @description 3-32 of A-Z a-z 0-9 . _ -, unique ignoring case */
                    username?: string;
                    /**
                     * Format: int64
                     * @description Increases by one on every change
                     */
                    version?: number;
                };
            };
        };
        responses: {
            /** @description The user as it now is */
            200: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["User"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description CONFLICT (a unique value is taken, or a limit is reached), VERSION_CONFLICT (a stale `version`), IDEMPOTENCY_KEY_IN_USE (retry after Retry-After) or LAST_ADMIN (the change would leave no active admin) */
            409: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description PRECONDITION_FAILED: If-Match does not match the current ETag */
            412: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description PAYLOAD_TOO_LARGE: the body is larger than BODY_LIMIT_BYTES */
            413: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch), its charset is not UTF-8, or it has a Content-Encoding other than identity (see Accept-Encoding) */
            415: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    listApiKeysV2: {
        parameters: {
            query?: {
                /** @description Cursor mode: the nextCursor of the previous page */
                cursor?: string;
                /** @description Items per page (default 20) */
                limit?: number;
                /** @description Sort direction (default asc) */
                order?: "asc" | "desc";
                /** @description Sort field (default createdAt) */
                sort?: "createdAt" | "name";
            };
            header?: never;
            path: {
                /** @description A user id (at most 2^53-1), or `me` for the caller's own id (a token is then required) */
                id: number | "me";
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of key records */
            200: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApiKeyListV2"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    createApiKeyV2: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A user id (at most 2^53-1), or `me` for the caller's own id (a token is then required) */
                id: number | "me";
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "deploy script",
                 *       "scopes": [
                 *         "links:read",
                 *         "links:write"
                 *       ],
                 *       "expiresAt": "2027-01-01T00:00:00.000Z"
                 *     }
                 */
                "application/json": {
                    /** @description Read-only; ignored */
                    createdAt?: unknown;
                    expiresAt?: string | null;
                    /** @description Read-only; ignored */
                    id?: unknown;
                    /** @description Read-only; ignored */
                    lastUsedAt?: unknown;
                    /** @description 1-64 characters, to tell keys apart */
                    name: string;
                    /** @description Read-only; ignored */
                    prefix?: unknown;
                    /** @description What the key may do: a non-empty subset of the scopes */
                    scopes: ("links:read" | "links:write" | "stats:read" | "orders:read" | "orders:write" | "users:read")[];
                };
            };
        };
        responses: {
            /** @description The key record and, this once, the key itself */
            201: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    /** @description The new key: /api/v1/users/{id}/api-keys/{key_id} */
                    Location: components["headers"]["Location"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApiKeyCreatedV2"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description CONFLICT (a unique value is taken, or a limit is reached), VERSION_CONFLICT (a stale `version`), IDEMPOTENCY_KEY_IN_USE (retry after Retry-After) or LAST_ADMIN (the change would leave no active admin) */
            409: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description PAYLOAD_TOO_LARGE: the body is larger than BODY_LIMIT_BYTES */
            413: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch), its charset is not UTF-8, or it has a Content-Encoding other than identity (see Accept-Encoding) */
            415: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description A well-formed request that cannot be done: ACCOUNT_NOT_ACTIVE (a pending account creates nothing), DESTINATION_BLOCKED (the target's host is on the blocked list), or IDEMPOTENCY_KEY_REUSED (the key was used for another request) */
            422: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    getApiKeyV2: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A user id (at most 2^53-1), or `me` for the caller's own id (a token is then required) */
                id: number | "me";
                /** @description A 64-bit id (at most 2^53-1) */
                key_id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The key record */
            200: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApiKeyV2"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    revokeApiKeyV2: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A user id (at most 2^53-1), or `me` for the caller's own id (a token is then required) */
                id: number | "me";
                /** @description A 64-bit id (at most 2^53-1) */
                key_id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Revoked */
            204: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description PAYLOAD_TOO_LARGE: the body is larger than BODY_LIMIT_BYTES */
            413: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch), its charset is not UTF-8, or it has a Content-Encoding other than identity (see Accept-Encoding) */
            415: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    listUserLinksV2: {
        parameters: {
            query?: {
                /** @description Cursor mode: the nextCursor of the previous page */
                cursor?: string;
                /** @description Items per page (default 20) */
                limit?: number;
                /** @description Sort direction (default asc) */
                order?: "asc" | "desc";
                /** @description Only links whose original_url, short_code or title contains this text (ignoring ASCII case; % and _ match themselves) */
                q?: string;
                /** @description Sort field (default id) */
                sort?: "id" | "createdAt" | "clickCount" | "expiresAt";
                /** @description Only links with this tag (any case) */
                tag?: string;
            };
            header?: never;
            path: {
                /** @description A user id (at most 2^53-1), or `me` for the caller's own id (a token is then required) */
                id: number | "me";
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of the user's links */
            200: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LinkListV2"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    listUserOrdersV2: {
        parameters: {
            query?: {
                /** @description Cursor mode: the nextCursor of the previous page */
                cursor?: string;
                /** @description Only orders of this item */
                itemId?: number;
                /** @description Items per page (default 20) */
                limit?: number;
                /** @description Sort direction (default asc) */
                order?: "asc" | "desc";
                /** @description Sort field (default id) */
                sort?: "id" | "createdAt" | "itemId" | "quantity";
            };
            header?: never;
            path: {
                /** @description A user id (at most 2^53-1), or `me` for the caller's own id (a token is then required) */
                id: number | "me";
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of the user's orders */
            200: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OrderList"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    getUserOrderV2: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description A user id (at most 2^53-1), or `me` for the caller's own id (a token is then required) */
                id: number | "me";
                /** @description A 64-bit id (at most 2^53-1) */
                order_id: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The order */
            200: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Order"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    getUserStatsV2: {
        parameters: {
            query?: {
                /** @description Window start (ISO 8601), rounded down to a whole hour / local day. Default: the first creation, or as far back as the bucket limit allows */
                from?: string;
                /** @description Bucket size of the time series (at most 1000 buckets) */
                interval?: "hour" | "day";
                /** @description Window end, exclusive, rounded up to a whole hour / local day. Default: now */
                to?: string;
                /** @description IANA time zone (e.g. `Europe/Berlin`): day buckets start at local midnight. Default `UTC`. An unknown zone is 400 naming `tz`. */
                tz?: string;
            };
            header?: never;
            path: {
                /** @description A user id (at most 2^53-1), or `me` for the caller's own id (a token is then required) */
                id: number | "me";
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Totals, time series and top lists over the user's links */
            200: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UserStatsV2"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_FOUND: no such resource (or it expired) */
            404: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    getCurrentUserV2: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The caller */
            200: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["User"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description UNAUTHENTICATED: no credential, or a JWT or API key that is malformed, expired or revoked, or whose user is deleted or suspended (see WWW-Authenticate) */
            401: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists; REGISTRATION_CLOSED: sign-up is closed (REGISTRATION=closed), only an admin creates accounts */
            403: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description NOT_ACCEPTABLE: Accept names an API version that is not served */
            406: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Access-Control-Allow-Origin": components["headers"]["Access-Control-Allow-Origin"];
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    getHealth: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The process is alive and its event loop answers */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Health"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    getMetrics: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Request counts and durations by route and status, redirect latency, click queue depth, flush lag and drops, database pool use, process metrics */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "text/plain; version=0.0.4": string;
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
    getReadiness: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Every dependency answered. A failing check answers 503 with one detail per failing check instead. */
            200: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Readiness"];
                };
            };
            /** @description VALIDATION_ERROR (one `details` item per offending field, parameter or header) or MALFORMED_JSON */
            400: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_TIMEOUT: the request did not arrive whole in time (the connection is closed) */
            408: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description URI_TOO_LONG: the request target (path and query) is longer than 8192 characters */
            414: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description RATE_LIMITED: a rate limit is used up (RateLimit says which); retry after Retry-After seconds */
            429: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description REQUEST_HEADERS_TOO_LARGE: the request headers are larger than 16 KiB (the connection is closed) */
            431: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description INTERNAL_ERROR: an unexpected failure, logged under the request id; the answer holds no detail of it */
            500: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency (the database, Redis) is unreachable; STORAGE_UNAVAILABLE: the storage is full or read-only, so nothing can be written; retry after Retry-After seconds */
            503: {
                headers: {
                    "Cache-Control": components["headers"]["Cache-Control"];
                    "Retry-After": components["headers"]["Retry-After"];
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
        };
    };
}
