/** Settings of the instance an admin changes through the API (migration 042): one row per name, JSON text values. */
export interface InstanceSettingsTable {
  /** 'apple_app_site_association' | 'android_asset_links' (SPEC §21: the default domain's app links) */
  name: string;
  value: string;
  updated_at: number;
}
