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
    "/api/v1/links": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Shorten a URL (a token makes you its owner) */
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
        /** A short link (anyone) */
        get: operations["getLink"];
        put?: never;
        post?: never;
        /** Delete a link (owner or admin; an anonymous link: admin only). Its code is never issued again. */
        delete: operations["deleteLink"];
        options?: never;
        head?: never;
        /**
         * Change a link (owner or admin; JSON merge patch). The redirect follows at once here and within a second on every instance
         * @description original_url, expires_at, max_visits, forward_query, tags and password may change; short_code may not. If-Match with a stale ETag: 412.
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
        /** The short URL as a QR code (anyone): SVG by default, PNG for Accept: image/png or ?format=png */
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
         * @description Lifetime totals plus a time series and top referrers / user agents over a window. Computed from rollups: the cost does not grow with the number of clicks.
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
        /** Sign up (or, with an admin token, create any user) */
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
        /** Delete a user, their orders and their tokens */
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
    "/api/v2/links": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Shorten a URL (a token makes you its owner) */
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
        /** A short link (anyone) */
        get: operations["getLinkV2"];
        put?: never;
        post?: never;
        /** Delete a link (owner or admin; an anonymous link: admin only). Its code is never issued again. */
        delete: operations["deleteLinkV2"];
        options?: never;
        head?: never;
        /**
         * Change a link (owner or admin; JSON merge patch). The redirect follows at once here and within a second on every instance
         * @description original_url, expires_at, max_visits, forward_query, tags and password may change; short_code may not. If-Match with a stale ETag: 412.
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
        /** The short URL as a QR code (anyone): SVG by default, PNG for Accept: image/png or ?format=png */
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
         * @description Lifetime totals plus a time series and top referrers / user agents over a window. Computed from rollups: the cost does not grow with the number of clicks.
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
        /** Sign up (or, with an admin token, create any user) */
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
        /** Delete a user, their orders and their tokens */
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
            /**
             * Format: date-time
             * @description ISO 8601 UTC, e.g. 2026-11-21T10:15:30.123Z
             */
            clicked_at: string;
            /**
             * Format: int64
             * @description A 64-bit id (at most 2^53-1)
             */
            id: number;
            /** @description The client address (TRUST_PROXY-aware) */
            ip: string | null;
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
            /**
             * Format: date-time
             * @description ISO 8601 UTC, e.g. 2026-11-21T10:15:30.123Z
             */
            clickedAt: string;
            /**
             * Format: int64
             * @description A 64-bit id (at most 2^53-1)
             */
            id: number;
            /** @description The client address (TRUST_PROXY-aware) */
            ip: string | null;
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
                code: "VALIDATION_ERROR" | "MALFORMED_JSON" | "UNAUTHENTICATED" | "FORBIDDEN" | "INSUFFICIENT_SCOPE" | "NOT_FOUND" | "METHOD_NOT_ALLOWED" | "NOT_ACCEPTABLE" | "CONFLICT" | "VERSION_CONFLICT" | "IDEMPOTENCY_KEY_IN_USE" | "LINK_EXPIRED" | "LINK_EXHAUSTED" | "LINK_PASSWORD_REQUIRED" | "PRECONDITION_FAILED" | "PAYLOAD_TOO_LARGE" | "UNSUPPORTED_MEDIA_TYPE" | "IDEMPOTENCY_KEY_REUSED" | "ACCOUNT_NOT_ACTIVE" | "RATE_LIMITED" | "INTERNAL_ERROR" | "SERVICE_UNAVAILABLE";
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
         *       "id": 42,
         *       "short_code": "aZ3k9QxB",
         *       "short_url": "http://127.0.0.1:3000/aZ3k9QxB",
         *       "original_url": "https://example.com/a/long/path?x=1",
         *       "user_id": 7,
         *       "expires_at": null,
         *       "created_at": "2026-11-21T10:15:30.123Z",
         *       "updated_at": "2026-11-21T10:15:30.123Z",
         *       "click_count": 0,
         *       "max_visits": null,
         *       "forward_query": false,
         *       "tags": [
         *         "spring-campaign"
         *       ],
         *       "has_password": false
         *     }
         */
        Link: {
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
            /** @description null: never expires */
            expires_at: string | null;
            /** @description Append the visit's query string to the target (utm_* parameters pass through) */
            forward_query: boolean;
            /** @description Read-only: whether visitors need a password */
            has_password: boolean;
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
                    code: "VALIDATION_ERROR" | "MALFORMED_JSON" | "UNAUTHENTICATED" | "FORBIDDEN" | "INSUFFICIENT_SCOPE" | "NOT_FOUND" | "METHOD_NOT_ALLOWED" | "NOT_ACCEPTABLE" | "CONFLICT" | "VERSION_CONFLICT" | "IDEMPOTENCY_KEY_IN_USE" | "LINK_EXPIRED" | "LINK_EXHAUSTED" | "LINK_PASSWORD_REQUIRED" | "PRECONDITION_FAILED" | "PAYLOAD_TOO_LARGE" | "UNSUPPORTED_MEDIA_TYPE" | "IDEMPOTENCY_KEY_REUSED" | "ACCOUNT_NOT_ACTIVE" | "RATE_LIMITED" | "INTERNAL_ERROR" | "SERVICE_UNAVAILABLE";
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
                    code: "VALIDATION_ERROR" | "MALFORMED_JSON" | "UNAUTHENTICATED" | "FORBIDDEN" | "INSUFFICIENT_SCOPE" | "NOT_FOUND" | "METHOD_NOT_ALLOWED" | "NOT_ACCEPTABLE" | "CONFLICT" | "VERSION_CONFLICT" | "IDEMPOTENCY_KEY_IN_USE" | "LINK_EXPIRED" | "LINK_EXHAUSTED" | "LINK_PASSWORD_REQUIRED" | "PRECONDITION_FAILED" | "PAYLOAD_TOO_LARGE" | "UNSUPPORTED_MEDIA_TYPE" | "IDEMPOTENCY_KEY_REUSED" | "ACCOUNT_NOT_ACTIVE" | "RATE_LIMITED" | "INTERNAL_ERROR" | "SERVICE_UNAVAILABLE";
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
         *       "total_clicks": 3,
         *       "click_count": 3,
         *       "unique_visitors": 2,
         *       "first_click_at": "2026-11-21T10:15:30.123Z",
         *       "last_click_at": "2026-11-22T08:01:02.000Z",
         *       "from": "2026-11-21T00:00:00.000Z",
         *       "to": "2026-11-23T00:00:00.000Z",
         *       "interval": "day",
         *       "timeseries": [
         *         {
         *           "start": "2026-11-21T00:00:00.000Z",
         *           "clicks": 2
         *         },
         *         {
         *           "start": "2026-11-22T00:00:00.000Z",
         *           "clicks": 1
         *         }
         *       ],
         *       "top_referrers": [
         *         {
         *           "value": "https://news.example",
         *           "clicks": 2
         *         }
         *       ],
         *       "top_user_agents": [
         *         {
         *           "value": "Mozilla/5.0 (X11; Linux x86_64)",
         *           "clicks": 3
         *         }
         *       ]
         *     }
         */
        LinkStats: {
            /**
             * Format: int64
             * @description Lifetime: the link's counter (as in the link record)
             */
            click_count: number;
            /** @description Lifetime; null before the first click */
            first_click_at: string | null;
            /**
             * Format: date-time
             * @description Start of the window the time series and top lists cover (a bucket boundary)
             */
            from: string;
            interval: "hour" | "day";
            /** @description Lifetime; null before the first click */
            last_click_at: string | null;
            short_code: string;
            /** @description One entry per bucket of the window, oldest first; buckets without clicks have 0 */
            timeseries: {
                /**
                 * Format: int64
                 * @description Clicks
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
            /** @description Referrer origins over the whole UTC days of the window, most clicks first. At most 100 distinct values are kept per link and day; later new ones count as "(other)". */
            top_referrers: {
                /**
                 * Format: int64
                 * @description Clicks
                 */
                clicks: number;
                /** @description A referrer origin or a user agent, as counted */
                value: string;
            }[];
            /** @description User agents, counted like top_referrers */
            top_user_agents: {
                /**
                 * Format: int64
                 * @description Clicks
                 */
                clicks: number;
                /** @description A referrer origin or a user agent, as counted */
                value: string;
            }[];
            /**
             * Format: int64
             * @description Lifetime: exactly the number of click records written so far
             */
            total_clicks: number;
            /**
             * Format: int64
             * @description Lifetime: distinct client IP addresses
             */
            unique_visitors: number;
        };
        /**
         * @example {
         *       "shortCode": "aZ3k9QxB",
         *       "totalClicks": 3,
         *       "clickCount": 3,
         *       "uniqueVisitors": 2,
         *       "firstClickAt": "2026-11-21T10:15:30.123Z",
         *       "lastClickAt": "2026-11-22T08:01:02.000Z",
         *       "from": "2026-11-21T00:00:00.000Z",
         *       "to": "2026-11-23T00:00:00.000Z",
         *       "interval": "day",
         *       "timeseries": [
         *         {
         *           "start": "2026-11-21T00:00:00.000Z",
         *           "clicks": 2
         *         },
         *         {
         *           "start": "2026-11-22T00:00:00.000Z",
         *           "clicks": 1
         *         }
         *       ],
         *       "topReferrers": [
         *         {
         *           "value": "https://news.example",
         *           "clicks": 2
         *         }
         *       ],
         *       "topUserAgents": [
         *         {
         *           "value": "Mozilla/5.0 (X11; Linux x86_64)",
         *           "clicks": 3
         *         }
         *       ]
         *     }
         */
        LinkStatsV2: {
            /**
             * Format: int64
             * @description Lifetime: the link's counter (as in the link record)
             */
            clickCount: number;
            /** @description Lifetime; null before the first click */
            firstClickAt: string | null;
            /**
             * Format: date-time
             * @description Start of the window the time series and top lists cover (a bucket boundary)
             */
            from: string;
            interval: "hour" | "day";
            /** @description Lifetime; null before the first click */
            lastClickAt: string | null;
            shortCode: string;
            /** @description One entry per bucket of the window, oldest first; buckets without clicks have 0 */
            timeseries: {
                /**
                 * Format: int64
                 * @description Clicks
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
            /** @description Referrer origins over the whole UTC days of the window, most clicks first. At most 100 distinct values are kept per link and day; later new ones count as "(other)". */
            topReferrers: {
                /**
                 * Format: int64
                 * @description Clicks
                 */
                clicks: number;
                /** @description A referrer origin or a user agent, as counted */
                value: string;
            }[];
            /** @description User agents, counted like top_referrers */
            topUserAgents: {
                /**
                 * Format: int64
                 * @description Clicks
                 */
                clicks: number;
                /** @description A referrer origin or a user agent, as counted */
                value: string;
            }[];
            /**
             * Format: int64
             * @description Lifetime: exactly the number of click records written so far
             */
            totalClicks: number;
            /**
             * Format: int64
             * @description Lifetime: distinct client IP addresses
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
         *       "maxVisits": null,
         *       "forwardQuery": false,
         *       "tags": [
         *         "spring-campaign"
         *       ],
         *       "hasPassword": false
         *     }
         */
        LinkV2: {
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
            /** @description null: never expires */
            expiresAt: string | null;
            /** @description Append the visit's query string to the target (utm_* parameters pass through) */
            forwardQuery: boolean;
            /** @description Read-only: whether visitors need a password */
            hasPassword: boolean;
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
         *         "database": "ok"
         *       }
         *     }
         */
        Readiness: {
            /** @description Every dependency checked, by name (database; redis when used) */
            checks: {
                [key: string]: "ok";
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
            /** @description LINK_EXPIRED: the link has expired; LINK_EXHAUSTED: it has had its max_visits */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description LINK_EXPIRED: the link has expired; LINK_EXHAUSTED: it has had its max_visits */
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
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch) */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description CONFLICT (a unique value is taken, or a limit is reached), VERSION_CONFLICT (a stale `version`) or IDEMPOTENCY_KEY_IN_USE (retry after Retry-After) */
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
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch) */
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
            /** @description A well-formed request that cannot be done: ACCOUNT_NOT_ACTIVE, or IDEMPOTENCY_KEY_REUSED (the key was used for another request) */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
        /** @description JSON merge patch (RFC 7396): only the sent fields change; null clears expires_at, max_visits, tags and password */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch) */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
                /** @description Window start (ISO 8601), rounded down to a whole UTC hour/day. Default: the link's creation, or as far back as the bucket limit allows */
                from?: string;
                /** @description Bucket size of the time series (at most 1000 buckets) */
                interval?: "hour" | "day";
                /** @description Window end, exclusive, rounded up to a whole UTC hour/day. Default: now */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description CONFLICT (a unique value is taken, or a limit is reached), VERSION_CONFLICT (a stale `version`) or IDEMPOTENCY_KEY_IN_USE (retry after Retry-After) */
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
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch) */
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
            /** @description A well-formed request that cannot be done: ACCOUNT_NOT_ACTIVE, or IDEMPOTENCY_KEY_REUSED (the key was used for another request) */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description CONFLICT (a unique value is taken, or a limit is reached), VERSION_CONFLICT (a stale `version`) or IDEMPOTENCY_KEY_IN_USE (retry after Retry-After) */
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
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch) */
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
            /** @description A well-formed request that cannot be done: ACCOUNT_NOT_ACTIVE, or IDEMPOTENCY_KEY_REUSED (the key was used for another request) */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch) */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description The new user (pending unless an admin set the status) */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description CONFLICT (a unique value is taken, or a limit is reached), VERSION_CONFLICT (a stale `version`) or IDEMPOTENCY_KEY_IN_USE (retry after Retry-After) */
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
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch) */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
        /** @description PUT: omitted name/age become null; omitted role/status stay as they are */
        requestBody: {
            content: {
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description CONFLICT (a unique value is taken, or a limit is reached), VERSION_CONFLICT (a stale `version`) or IDEMPOTENCY_KEY_IN_USE (retry after Retry-After) */
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
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch) */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description CONFLICT (a unique value is taken, or a limit is reached), VERSION_CONFLICT (a stale `version`) or IDEMPOTENCY_KEY_IN_USE (retry after Retry-After) */
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
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch) */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description CONFLICT (a unique value is taken, or a limit is reached), VERSION_CONFLICT (a stale `version`) or IDEMPOTENCY_KEY_IN_USE (retry after Retry-After) */
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
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch) */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
                /** @description Only links whose original_url or short_code contains this text (ignoring ASCII case; % and _ match themselves) */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description CONFLICT (a unique value is taken, or a limit is reached), VERSION_CONFLICT (a stale `version`) or IDEMPOTENCY_KEY_IN_USE (retry after Retry-After) */
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
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch) */
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
            /** @description A well-formed request that cannot be done: ACCOUNT_NOT_ACTIVE, or IDEMPOTENCY_KEY_REUSED (the key was used for another request) */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
        /** @description JSON merge patch (RFC 7396): only the sent fields change; null clears expires_at, max_visits, tags and password */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch) */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
                /** @description Window start (ISO 8601), rounded down to a whole UTC hour/day. Default: the link's creation, or as far back as the bucket limit allows */
                from?: string;
                /** @description Bucket size of the time series (at most 1000 buckets) */
                interval?: "hour" | "day";
                /** @description Window end, exclusive, rounded up to a whole UTC hour/day. Default: now */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description CONFLICT (a unique value is taken, or a limit is reached), VERSION_CONFLICT (a stale `version`) or IDEMPOTENCY_KEY_IN_USE (retry after Retry-After) */
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
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch) */
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
            /** @description A well-formed request that cannot be done: ACCOUNT_NOT_ACTIVE, or IDEMPOTENCY_KEY_REUSED (the key was used for another request) */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description CONFLICT (a unique value is taken, or a limit is reached), VERSION_CONFLICT (a stale `version`) or IDEMPOTENCY_KEY_IN_USE (retry after Retry-After) */
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
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch) */
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
            /** @description A well-formed request that cannot be done: ACCOUNT_NOT_ACTIVE, or IDEMPOTENCY_KEY_REUSED (the key was used for another request) */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch) */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description The new user (pending unless an admin set the status) */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description CONFLICT (a unique value is taken, or a limit is reached), VERSION_CONFLICT (a stale `version`) or IDEMPOTENCY_KEY_IN_USE (retry after Retry-After) */
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
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch) */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
        /** @description PUT: omitted name/age become null; omitted role/status stay as they are */
        requestBody: {
            content: {
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description CONFLICT (a unique value is taken, or a limit is reached), VERSION_CONFLICT (a stale `version`) or IDEMPOTENCY_KEY_IN_USE (retry after Retry-After) */
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
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch) */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description CONFLICT (a unique value is taken, or a limit is reached), VERSION_CONFLICT (a stale `version`) or IDEMPOTENCY_KEY_IN_USE (retry after Retry-After) */
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
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch) */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description CONFLICT (a unique value is taken, or a limit is reached), VERSION_CONFLICT (a stale `version`) or IDEMPOTENCY_KEY_IN_USE (retry after Retry-After) */
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
            /** @description UNSUPPORTED_MEDIA_TYPE: the body is not application/json (or, for PATCH, application/merge-patch+json; see Accept-Patch) */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
                /** @description Only links whose original_url or short_code contains this text (ignoring ASCII case; % and _ match themselves) */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description FORBIDDEN: the caller may not do this (another user's data, an admin-only operation, or an operation API keys cannot do); INSUFFICIENT_SCOPE: an API key without the scope this operation lists */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
            /** @description SERVICE_UNAVAILABLE: overloaded, in maintenance mode, or a dependency is down; retry after Retry-After seconds */
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
